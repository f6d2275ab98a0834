"""TLS on the P4Runtime server with simple_switch_grpc's options
(-- --grpc-server-ssl --grpc-server-cert/--grpc-server-key, and
--grpc-server-cacert --grpc-server-with-client-auth for mutual TLS), with
certificates this test makes (openssl CLI, in tmp_path); and the warning
for a plaintext server other hosts can reach."""

from __future__ import annotations

import shutil
import subprocess

import grpc
import pytest
from finsy.proto import p4r, p4r_grpc

from p4scope.switch.options import UsageError, parse_args
from tests.switch.test_daemon import start

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl CLI")


def _openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    """A CA, a server certificate for 127.0.0.1/localhost and a client
    certificate, both signed by the CA (P-256 keys: quick to make)."""
    d = tmp_path_factory.mktemp("pki")
    ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")
    _openssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
             "-subj", "/CN=p4scope test CA", cwd=d)
    (d / "server.ext").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    (d / "client.ext").write_text("extendedKeyUsage=clientAuth\n")
    for who in ("server", "client"):
        _openssl("req", *ec, "-keyout", f"{who}.key", "-out", f"{who}.csr",
                 "-subj", f"/CN=p4scope test {who}", cwd=d)
        _openssl("x509", "-req", "-in", f"{who}.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
                 "-CAcreateserial", "-out", f"{who}.pem", "-days", "2",
                 "-extfile", f"{who}.ext", cwd=d)
    return d


def capabilities(channel: grpc.Channel) -> str:
    with channel:
        stub = p4r_grpc.P4RuntimeStub(channel)
        return stub.Capabilities(p4r.CapabilitiesRequest(), timeout=5).p4runtime_api_version


def tls(pki, with_cert: bool = False) -> grpc.ChannelCredentials:
    read = lambda name: (pki / name).read_bytes()  # noqa: E731
    if with_cert:
        return grpc.ssl_channel_credentials(read("ca.pem"), read("client.key"),
                                            read("client.pem"))
    return grpc.ssl_channel_credentials(read("ca.pem"))


def stop(proc) -> str:
    proc.terminate()
    _, err = proc.communicate(timeout=15)
    assert proc.returncode == 0, err
    return err


def test_tls_server_serves_tls_clients_only(tmp_path, pki):
    proc, addr, _ = start(tmp_path, "--grpc-server-ssl", "--grpc-server-cert",
                          str(pki / "server.pem"), "--grpc-server-key", str(pki / "server.key"))
    try:
        assert capabilities(grpc.secure_channel(addr, tls(pki))) == "1.3.0"
        with pytest.raises(grpc.RpcError) as e:
            capabilities(grpc.insecure_channel(addr))
        assert e.value.code() == grpc.StatusCode.UNAVAILABLE
    finally:
        err = stop(proc)
    assert "plaintext" not in err


def test_mutual_tls_needs_a_client_certificate(tmp_path, pki):
    proc, addr, _ = start(tmp_path, "--grpc-server-ssl", "--grpc-server-cert",
                          str(pki / "server.pem"), "--grpc-server-key", str(pki / "server.key"),
                          "--grpc-server-cacert", str(pki / "ca.pem"),
                          "--grpc-server-with-client-auth")
    try:
        assert capabilities(grpc.secure_channel(addr, tls(pki, with_cert=True))) == "1.3.0"
        for creds in (tls(pki), None):
            ch = grpc.secure_channel(addr, creds) if creds else grpc.insecure_channel(addr)
            with pytest.raises(grpc.RpcError) as e:
                capabilities(ch)
            assert e.value.code() == grpc.StatusCode.UNAVAILABLE
    finally:
        stop(proc)


def test_client_auth_needs_a_ca(pki):
    with pytest.raises(UsageError, match="--grpc-server-with-client-auth needs "
                                         "--grpc-server-cacert"):
        parse_args(["--no-p4", "--", "--grpc-server-ssl", "--grpc-server-cert",
                    str(pki / "server.pem"), "--grpc-server-key", str(pki / "server.key"),
                    "--grpc-server-with-client-auth"])


@pytest.mark.parametrize("opt", ["--grpc-server-cert", "--grpc-server-key",
                                 "--grpc-server-cacert"])
def test_a_file_without_pem_is_named(pki, tmp_path, opt):
    files = {"--grpc-server-cert": pki / "server.pem", "--grpc-server-key": pki / "server.key",
             "--grpc-server-cacert": pki / "ca.pem"}
    files[opt] = tmp_path / "junk.pem"
    files[opt].write_text("junk\n")
    with pytest.raises(UsageError, match=f"^{opt}: '.*junk.pem' holds no PEM"):
        parse_args(["--no-p4", "--", "--grpc-server-ssl",
                    *[w for k, v in files.items() for w in (k, str(v))]])
    files[opt] = pki / ("server.key" if opt != "--grpc-server-key" else "server.pem")
    with pytest.raises(UsageError, match=f"^{opt}: "):  # a key for a certificate, or back
        parse_args(["--no-p4", "--", "--grpc-server-ssl",
                    *[w for k, v in files.items() for w in (k, str(v))]])


@pytest.mark.parametrize("target, said", [
    (["--grpc-server-addr", "0.0.0.0:9559"], ["P4Runtime server on 0.0.0.0:9559"]),
    (["--grpc-server-addr", "[::]:9559"], ["P4Runtime server on [::]:9559"]),
    (["--thrift-ip", "0.0.0.0"], ["Thrift run-time API on 0.0.0.0:9090"]),
    (["--grpc-server-addr", "0.0.0.0:1", "--thrift-ip", "0.0.0.0", "--no-thrift"],
     ["P4Runtime server on 0.0.0.0:1"]),
    (["--grpc-server-addr", "localhost:9559"], []),
    (["--grpc-server-addr", "127.0.0.2:9559", "--thrift-ip", "::1"], []),
])
def test_plaintext_on_other_hosts_is_warned(target, said):
    warnings = [w for w in parse_args(["--no-p4", "--", *target]).warnings
                if "reachable from other hosts" in w]
    assert len(warnings) == len(said)
    for w, s in zip(warnings, said):
        assert s in w and "plaintext" in w
    if any("P4Runtime" in s for s in said):
        assert "--grpc-server-ssl --grpc-server-cert FILE --grpc-server-key FILE" in warnings[0]


def test_tls_on_every_interface_is_not_warned(pki):
    o = parse_args(["--no-p4", "--", "--grpc-server-addr", "0.0.0.0:9559", "--grpc-server-ssl",
                    "--grpc-server-cert", str(pki / "server.pem"),
                    "--grpc-server-key", str(pki / "server.key")])
    assert not [w for w in o.warnings if "plaintext" in w]
