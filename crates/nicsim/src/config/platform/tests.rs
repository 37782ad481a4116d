use super::*;
use crate::config::{preset_names, preset_text};

#[test]
fn embedded_presets_parse_and_validate() {
    for name in preset_names() {
        // A LANai platform's derived keys are filled in when it is loaded.
        let p = crate::config::load_platform(name, None).unwrap();
        p.validate().unwrap();
        assert_eq!(p.name, name);
        if p.lanai.is_none() {
            assert_eq!(Platform::from_toml(preset_text(name).unwrap()).unwrap(), p);
        }
    }
}

#[test]
fn unknown_key_is_named() {
    let text = preset_text("omx2009").unwrap().replace("[nic]\n", "[nic]\nfw_rx_nsec = 3.0\n");
    let e = Platform::from_toml(&text).unwrap_err();
    assert!(e.0.contains("fw_rx_nsec"), "{e}");
}

#[test]
fn out_of_range_is_named() {
    let mut p = Platform::from_toml(preset_text("omx2009").unwrap()).unwrap();
    p.link.mtu = 100;
    let e = p.validate().unwrap_err();
    assert!(e.0.contains("link.mtu") && e.0.contains("100") && e.0.contains("576"), "{e}");
}

/// The optional tables' own ranges are the one validation's, with every
/// other table's: a LANai platform's bus (`[pci]`), NI (`[lanai]`) and
/// library (`[lci]`) out of range are named by `Platform::validate`.
#[test]
fn the_optional_tables_ranges_are_the_platforms_checks() {
    let lci = crate::config::load_platform("lci2000", None).unwrap();
    let mut p = lci.clone();
    p.pci.as_mut().unwrap().pio_read_ns = 0.5;
    let e = p.validate().unwrap_err().0;
    assert!(e.contains("`pci.pio_read_ns`") && e.contains("0.5"), "{e}");
    let mut p = lci.clone();
    p.lanai.as_mut().unwrap().header_bytes = 2;
    let e = p.validate().unwrap_err().0;
    assert!(e.contains("lanai.header_bytes") && e.contains('2'), "{e}");
    let mut p = lci;
    p.lci.as_mut().unwrap().recv_buffers = 0;
    let e = p.validate().unwrap_err().0;
    assert!(e.contains("lci.recv_buffers") && e.contains('0'), "{e}");
}
