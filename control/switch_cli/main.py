"""`p4scope switch-cli`: simple_switch_CLI for p4scope (and for BMv2).

    p4scope switch-cli [--thrift-port 9090] [--thrift-ip 127.0.0.1] [--json F] [SCRIPT]

Connects to the run-time server of a running switch, fetches its program's
JSON (or reads --json and warns when it differs from the switch's), then
reads commands interactively (prompt "RuntimeCmd: "), from a piped stdin
(`p4scope switch-cli < commands.txt`, as people feed simple_switch_CLI) or
from SCRIPT. Exit status 0, as simple_switch_CLI; with --fail-on-error, 1 if
any command failed; 1 if the switch cannot be reached.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from typing import Optional

PROG = "p4scope switch-cli"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description="BMv2 runtime CLI (simple_switch_CLI "
                                "commands) for a running p4scope switch or BMv2 simple_switch")
    p.add_argument("--thrift-port", type=int, default=9090,
                   help="Thrift server port of the switch (default 9090)")
    p.add_argument("--thrift-ip", default="127.0.0.1",
                   help="Thrift server address of the switch (default 127.0.0.1)")
    p.add_argument("--json", help="JSON description of the P4 program (default: ask the switch)")
    p.add_argument("--pre", choices=["None", "SimplePre", "SimplePreLAG"], default="SimplePreLAG",
                   help="accepted for compatibility (simple_switch uses SimplePreLAG)")
    p.add_argument("--fail-on-error", action="store_true",
                   help="exit with status 1 if any command failed")
    p.add_argument("script", nargs="?", help="file of commands to run (default: standard input)")
    return p


def main(argv: Optional[list[str]] = None) -> int:
    args = parser().parse_args(argv)
    from .client import ConnectError, connect
    from .program import load_program
    from .shell import SwitchShell
    out = sys.stdout
    try:
        clients = connect(args.thrift_ip, args.thrift_port)
    except ConnectError:
        out.write(f"Could not connect to thrift client on port {args.thrift_port}\n"
                  "Make sure the switch is running and that you have the right port\n")
        return 1
    try:
        if args.json:
            with open(args.json, "rb") as f:
                data = f.read()
            mine = hashlib.md5(data).digest()
            theirs = clients.standard.bm_get_config_md5()
            if mine != theirs:
                out.write("**********\nWARNING: the JSON files loaded into the switch and the one "
                          "you just provided to this CLI don't have the same md5 sum. Are you "
                          "sure they describe the same program?\n"
                          f"{'switch md5':<15}: {theirs.hex()}\n"
                          f"{'CLI input md5':<15}: {mine.hex()}\n**********\n")
            json_text = data.decode("utf-8")
        else:
            out.write("Obtaining JSON from switch...\n")
            json_text = clients.standard.bm_get_config()
            out.write("Done\n")
        prog = load_program(json_text)
        if args.script:
            with open(args.script, encoding="utf-8") as f:
                shell = SwitchShell(clients, prog, stdin=f, stdout=out)
                shell.cmdloop()
        else:
            shell = SwitchShell(clients, prog)
            shell.cmdloop()
        return 1 if args.fail_on_error and shell.errors else 0
    except KeyboardInterrupt:
        out.write("\n")
        return 0
    finally:
        clients.close()


if __name__ == "__main__":
    sys.exit(main())
