"""The mechanisms of [EMO] in ``docs/validation.md``.

[EMO]: the extensible message-oriented offload model.

:data:`MECHANISMS`: every cause the study's prose gives for a result,
quoted, with whether nicsim models it. Joined with the other studies' in
:mod:`nicsim.validation_mechanisms`.
"""

from __future__ import annotations

from nicsim.validation_records import IT as _IT
from nicsim.validation_records import SRC as _SRC
from nicsim.validation_records import Mechanism
from nicsim.validation_records import code_at as _c
from nicsim.validation_records import quote as _q
from nicsim.validation_records import test_at as _t

_PRESET_EMO = "presets/emo2004.toml"

MECHANISMS: tuple[Mechanism, ...] = (
    Mechanism(
        "Coalescing amortises the interrupt's host overhead",
        (
            _q(
                "emo",
                "§3.1",
                "Interrupt coalescing amortizes the cost of the  $O_{NH}$  over many messages.",
            ),
        ),
        "overhead with and without coalescing (Fig. 2, 7)",
        "modelled",
        (_c(_SRC + "model/mod.rs", "coalesc"),),
        (_t(_SRC + "model/mod.rs", "overheads_are_the_spec_sums"),),
        ("emo-overhead",),
        "The model's O_NH and the simulator's interrupt cost per batch; both read one "
        "scenario, so they agree (the study compares with measurements instead).",
    ),
    Mechanism(
        "Coalescing moves L_NH: the same slope, a larger offset",
        (
            _q(
                "emo",
                "§4.1.4",
                "Interrupt coalescing can be seen as a move to decrease the overhead effect of "
                "the interrupt  $O_{NH}$  at the cost of the time that an interrupt will reach "
                "the host. This means we expect that  $L_{NH}$  is the variable affected.",
            ),
        ),
        "latency higher with maximum coalescing, slope unchanged (Fig. 5, 6)",
        "modelled",
        (_c(_SRC + "model/mod.rs", "coalesc"),),
        (
            _t(_SRC + "model/mod.rs", "coalescing_wait_moves_only_the_offset"),
            _t(_IT + "emo.rs", "coalescing_raises_model_and_simulated_offset_alike"),
        ),
        ("emo-latency",),
        "",
    ),
    Mechanism(
        "The copy to user space steepens the application path's latency",
        (
            _q(
                "emo",
                "§4.1.4",
                "Also as we expected, the slope of the ToApp latency increases more quickly as "
                "it is dependant on the message size during the crossing of the wire X which "
                "is reflected in the ToKernel slope and on the copy from kernel to user space  "
                "$L_{HA}$ .",
            ),
        ),
        "ToApp latency steeper than ToKernel and ToNIC (Fig. 4)",
        "modelled",
        (_c(_SRC + "sim/echo.rs", "fn kernel_echo"),),
        (_t(_IT + "emo.rs", "model_slope_vs_size_matches_the_simulator_on_each_path"),),
        ("emo-latency",),
        "",
    ),
    Mechanism(
        "The NIC echo includes a firmware byte copy at 88 MHz",
        (
            _q(
                "emo",
                "§4.1.2",
                "Because of the structure of the Acenic firmware, we had to include a bcopy "
                "(byte copy) of the entire message from the receive buffer to a transmit "
                "buffer. This copy is performed at the speed of the Acenic processor (88 MHz).",
            ),
        ),
        "ToNIC latency and its projection without the copy (Fig. 4)",
        "modelled",
        (_c(_SRC + "nic/mod.rs", "pub fn firmware_echo"), _c(_SRC + "sim/echo.rs", "fn nic_echo")),
        (_t(_SRC + "sim/echo.rs", "nic_echo_has_no_host_work_and_kernel_echo_no_application"),),
        ("emo-latency",),
        "",
    ),
    Mechanism(
        "The AceNIC's 5 µs DMA start-up belongs to L_NH",
        (
            _q(
                "emo",
                "§4.1.2",
                "It is important to note that the startup time for the DMA engine on the "
                "Acenic cards is approximately 5 $\\mu$ s. This will be accounted for in the  "
                "$L_{NH}$  portion of the calculation.",
            ),
        ),
        "the ToKernel - ToNIC difference (Fig. 4)",
        "modelled",
        (_c(_PRESET_EMO, "dma_startup_ns"),),
        (_t(_SRC + "model/from_scenario.rs", "emo2004_wire_and_nic_terms_by_hand"),),
        ("emo-latency",),
        "",
    ),
    Mechanism(
        "No host overhead when the echo runs in the NIC",
        (
            _q(
                "emo",
                "§4.2.4",
                "As expected, there was no communication overhead when the UDP echoserver runs "
                "at the NIC level.",
            ),
        ),
        "zero overhead on the NIC path (Fig. 7)",
        "modelled",
        (_c(_SRC + "sim/echo.rs", "fn nic_echo"),),
        (_t(_SRC + "sim/echo.rs", "nic_echo_has_no_host_work_and_kernel_echo_no_application"),),
        ("emo-overhead",),
        "",
    ),
    Mechanism(
        "The kernel echo skips the user copy and the route lookup",
        (
            _q(
                "emo",
                "§4.1.3",
                "The UDP echo server does not perform a copy of data to user space and does "
                "not perform a route lookup.",
            ),
        ),
        "ToKernel latency below ToApp (Fig. 4)",
        "partly",
        (_c(_SRC + "sim/echo.rs", "fn kernel_echo"),),
        (_t(_SRC + "sim/echo.rs", "nic_echo_has_no_host_work_and_kernel_echo_no_application"),),
        ("emo-latency",),
        "The kernel echo has no user copy; nicsim has no IP layer, so there is no route "
        "lookup to skip and the inetd echo's own code path is the Open-MX handler's.",
    ),
    Mechanism(
        "Fewer interrupts per byte as messages approach 9000 B",
        (
            _q(
                "emo",
                "§4.2.4",
                "As the size of the message approaches 9000 bytes, the number of interrupts "
                "decreases and so the overall communication processing overhead also "
                "decreases. This is true for all schemes but the maximum interrupt coalescing "
                "scheme which utilizes large delays in processing interrupts to flatten out "
                "the overhead curve.",
            ),
        ),
        "kernel-path overhead falls with size except with maximum coalescing (Fig. 7)",
        "modelled",
        (_c(_SRC + "model/mod.rs", "coalesc"),),
        (_t(_IT + "emo.rs", "model_and_simulated_overhead_agree_on_the_echo_host"),),
        ("emo-overhead",),
        "A fixed per-message cost over a longer round trip: the overhead share falls with "
        "size; with maximum coalescing the 100 µs wait dominates.",
    ),
    Mechanism(
        "The copy to the application offsets the saved interrupts",
        (
            _q(
                "emo",
                "§4.2.4",
                "We expect that as messages become larger, the increase cost of overhead "
                "associated with the copy of data to the application ( $O_{HA}$ ) is just "
                "offset by the decrease cost of overhead associated with fewer interrupts "
                "( $O_{NH}$ ).",
            ),
        ),
        "application-to-application overhead constant over sizes (Fig. 8)",
        "partly",
        (_c(_SRC + "model/mod.rs", "coalesc"),),
        (),
        ("emo-overhead",),
        "Both terms are modelled, but nicsim's echo host overhead on the application path "
        "falls with size without coalescing and rises with maximum coalescing instead of "
        "staying constant.",
    ),
    Mechanism(
        "EMO prices a message as one unit; the study kept messages in one frame",
        (
            _q(
                "emo",
                "§Abstract",
                "However, the extensible message-oriented offload model (EMO) is the first model "
                "to emphasize the performance of the network protocol itself and models it in a "
                "message-oriented rather than flow-oriented manner.",
            ),
            _q(
                "emo",
                "§4.1.1",
                "We wanted to remain within the jumbo frame size to avoid fragmentation and "
                "reassembly or multiple packets, but we wanted to exercise the crossing of page "
                "boundaries.",
            ),
        ),
        "the model verified on one-frame messages (Fig. 4, 5)",
        "modelled",
        (_c(_SRC + "model/from_scenario.rs", "fn message"),),
        (
            _t(_SRC + "model/from_scenario.rs", "a_message_of_several_frames_is_priced_as_one"),
            _t(
                _IT + "emo.rs",
                "several_frames_part_from_the_message_oriented_sum_more_with_more_frames",
            ),
        ),
        ("emo-latency",),
        "The model prices a message once (per-message costs once, per-byte costs over all "
        "its bytes); the simulator cuts it into Open-MX fragments of 8192 B at MTU 9000, pays "
        "the per-frame costs per frame and overlaps successive frames (EMO's gap, §2.0.3). "
        "One frame: model = simulation (the study's verification). Two to four frames "
        "(8900 B, the study's largest size, is already two in Open-MX where its UDP datagram "
        "was one): the overlap wins on every path and the simulated latency falls below the "
        "model's, by more with more frames.",
    ),
    Mechanism(
        "Larger messages: application overhead slopes up once interrupts stop saving",
        (
            _q(
                "emo",
                "§4.2.4",
                "Measurements for much larger messages should reveal application to "
                "application overheads that begin to slope up with the size of the message, "
                "especially since the savings in interrupts is maximized at 9000 bytes.",
            ),
        ),
        "the study's expectation beyond its measurements (§5: future work)",
        "modelled",
        (_c(_SRC + "sim/echo.rs", "fn kernel_echo"),),
        (_t(_IT + "emo.rs", "each_frame_brings_its_own_host_work_beyond_the_model"),),
        ("emo-overhead",),
        "Beyond one frame each fragment brings its own interrupt, driver and handler work to "
        "the echo host: the simulated overhead rises with size and exceeds the message-oriented "
        "model's, which counts that work once.",
    ),
    Mechanism(
        "The projected ToNIC and the ToKernel latencies share a slope",
        (
            _q(
                "emo",
                "§4.1.4",
                "As we expected, the slope of the ToNIC and ToKernel are the same since we "
                "expect the interrupt latency to be constant.",
            ),
        ),
        "ToNIC less the bcopy parallel to ToKernel (Fig. 4)",
        "partly",
        (_c("python/nicsim/exp_emo.py", "def projected_to_nic"),),
        (),
        ("emo-latency",),
        "emo-latency projects ToNIC as the study does (half a bcopy at 4 cycles/B and 88 MHz "
        "off) and checks the slopes; in nicsim the kernel echo's bytes cross the PCI bus "
        "twice more (receive and transmit DMA at `nic.dma_MBps`), a per-byte part of L_NH, "
        "so ToKernel is about a quarter steeper and the claim does not hold.",
    ),
    Mechanism(
        "Host A keeps default coalescing while Host B's setting varies",
        (
            _q(
                "emo",
                "§4",
                "Host A is a 933 MHz Pentium III running an unmodified Linux 2.4.25 kernel with "
                "the Acenic Gigabit Ethernet card set to default values for interrupt "
                "coalescing and transmit ratios.",
            ),
        ),
        "the coalescing comparison (Fig. 5, 6)",
        "modelled",
        (
            _c("python/nicsim/model.py", "def echo_scenario"),
            _c(_SRC + "model/from_scenario.rs", "pub fn client_coalescing_wait_s"),
        ),
        (
            _t(_SRC + "model/from_scenario.rs", "the_client_keeps_its_own_coalescing"),
            _t(_IT + "emo.rs", "host_a_keeps_default_coalescing_while_host_b_disables_it"),
        ),
        ("emo-latency",),
        "`nic.host0` gives host 0 its own timeout coalescing; the EMO scenarios keep it at "
        "the AceNIC defaults (30 µs, 6 frames) while none/default/max set host 1's, so every "
        "row includes Host A's wait and Host B's setting adds one wait per round trip.",
    ),
    Mechanism(
        "One shared PCI bus for the AceNIC's receive and transmit DMA",
        (
            _q(
                "emo",
                "§4.1.2",
                "It is important to note that the startup time for the DMA engine on the "
                "Acenic cards is approximately 5 $\\mu$ s.",
            ),
        ),
        "the latency of messages of several frames (beyond the study)",
        "modelled",
        (_c(_SRC + "nic/mod.rs", "pub fn receive"), _c(_PRESET_EMO, "dma_shared_bus")),
        (_t(_IT + "emo.rs", "the_shared_pci_bus_slows_only_overlapping_frames"),),
        ("emo-latency",),
        "`nic.dma_shared_bus` (emo2004: the AceNIC's 64-bit/33 MHz PCI slot): receive and "
        "transmit DMA take turns, each holding the bus from its start-up to its last byte. "
        "One-frame echoes never overlap them (model = simulation); the kernel echo of several "
        "frames reads a reply while the next frame is written, so the bus bounds it.",
    ),
)

#: Every mechanism the studies' prose gives as the cause of a result.
