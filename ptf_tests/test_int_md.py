"""INT-MD v2.1: the reference DUT as source, transit and sink."""

from ptf.testutils import group

from int_md_features import IntMdTest


@group("int_md")
class IntMdSource(IntMdTest):
    """A watched UDP flow leaves with the INT-MD header and this hop's metadata."""

    def runTest(self):
        p = self.need_ports(2)
        self.run_source(p[0], p[1])


@group("int_md")
class IntMdTransit(IntMdTest):
    """This hop's metadata goes on top of the stack; an exhausted hop count sets E."""

    def runTest(self):
        p = self.need_ports(2)
        self.run_transit(p[0], p[1])


@group("int_md")
class IntMdSink(IntMdTest):
    """INT-MD is stripped at a sink port; the stack and the sink's hop are reported."""

    def runTest(self):
        p = self.need_ports(3)
        self.run_sink(p[0], p[1], p[2])
