"""The `p4scope` subcommands that wrap one tool each: `compile` (with its
output-path checks) and `stf` / `stf-dir` (p4c's STF packet tests and
their parser)."""
