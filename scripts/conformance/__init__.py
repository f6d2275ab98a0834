"""`p4scope conformance`: p4scope's compiler and engine against p4c's own
test programs (a local copy of p4c's testdata/, never part of this
repository): P4Info against p4c's golden files (cli), the STF tests on the
engine (cli), p4c's negative tests (errors), and whether BMv2's JSON
loader would take p4scope's JSON (bmv2json)."""
