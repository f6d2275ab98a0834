"""`p4scope ptf`: the PTF suite (ptf_tests/) against a switch started in a
network namespace of its own (lab), for either target (targets), run by
ptf with the options it takes (runner, cmd)."""
