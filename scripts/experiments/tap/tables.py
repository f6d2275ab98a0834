"""The tables a run with the tap stores (registry descriptions; an
experiment's tap module measures them, e.g. microburst/tap.py)."""

TABLES = {
    "tap_series": "per case and DUT egress port: the occupancy the tap infers after each change "
                  "(bytes, frames; NaN where lost reports leave it unknown), on the tap's clock",
    "tap_ingress": "the same split by the DUT port the frames came in on",
    "tap_reference": "per case: the DUT's egress qdisc backlog as sampled, on the tap's clock",
    "tap_bursts": "bursts the tap inferred (start, peak, end, size, drops, culprit ingress ports "
                  "and flows) and the reference's",
    "tap_errors": "per case and burst: the tap's peak and time-weighted mean against the "
                  "reference, and what sets them apart",
}
