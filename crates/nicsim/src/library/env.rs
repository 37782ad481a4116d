//! The world's parts a library call reads and never changes ([`Env`]),
//! among them the rank map ([`Ranks`]: rank -> (host, endpoint) and
//! back).

use crate::costs::Costs;
use crate::host::Topology;
use crate::wire::ENDPOINTS;

/// `rank_of` entry of an endpoint that no rank holds (a rank id above every
/// rank's: the configuration allows at most this many ranks).
pub(crate) const NO_RANK: u16 = u16::MAX;
const _: () = assert!(NO_RANK as u32 == crate::config::MAX_RANKS);

/// Where each rank runs, and which rank each endpoint holds.
#[derive(Debug)]
pub(crate) struct Ranks {
    /// Rank -> (host, endpoint).
    of: Vec<(u16, u8)>,
    /// \[host]\[endpoint] -> rank ([`NO_RANK`]: none).
    at: Vec<Vec<u16>>,
}

impl Ranks {
    pub(crate) fn new(hosts: usize) -> Self {
        Ranks { of: Vec::new(), at: vec![vec![NO_RANK; ENDPOINTS]; hosts] }
    }

    /// Gives the next rank to endpoint `ep` of `host`; returns it.
    pub(crate) fn add(&mut self, host: u16, ep: u8) -> u16 {
        // The configuration caps the ranks below `NO_RANK`.
        let rank = u16::try_from(self.of.len()).ok().filter(|&r| r != NO_RANK).expect("at most MAX_RANKS ranks");
        self.of.push((host, ep));
        self.at[host as usize][ep as usize] = rank;
        rank
    }

    /// The rank endpoint `ep` of `host` holds ([`NO_RANK`]: none).
    #[inline]
    pub(crate) fn at(&self, host: usize, ep: usize) -> u16 {
        self.at[host][ep]
    }

    pub(crate) fn len(&self) -> usize {
        self.of.len()
    }
}

impl std::ops::Index<usize> for Ranks {
    type Output = (u16, u8);

    /// Where rank `r` runs: (host, endpoint).
    #[inline]
    fn index(&self, r: usize) -> &(u16, u8) {
        &self.of[r]
    }
}

/// The world's parts fixed once it is built and read by every library
/// call: a library's context ([`crate::library::Cx`]) holds one reference
/// to them rather than one to each.
pub(crate) struct Env {
    pub(crate) c: Costs,
    pub(crate) topo: Topology,
    /// Rank -> (host, endpoint).
    pub(crate) ranks: Ranks,
    /// The NI clocks run (`clock`): a missed deadline is reported.
    pub(crate) clock: bool,
}
