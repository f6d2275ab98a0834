"""Benchmarks that print figures (never timed tests): compile time, the
engine's packet rate and a 16x100GbE incast, the P4Runtime server's write
and read rates, the real-time loop between veth pairs, the traffic
generator, TCP through one switch in Mininet. `p4scope bench ...` runs
them; `python -m p4scope.bench.engine` and `.incast` run on their own."""
