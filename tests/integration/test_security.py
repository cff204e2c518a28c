"""Network exposure and dangerous commands: protected mode (clients from outside the loopback
interface are refused while the default user has no password, with Redis's DENIED text), the
loopback-only default bind, and rename-command (renaming or disabling commands at start-up).

The protected-mode tests need a client address outside 127.0.0.0/8: they bind the server to
0.0.0.0 and connect through an address of this machine's own network interface (for example
eth0's), which the kernel keeps as the source address."""
import os
import re
import socket
import subprocess
import tempfile
import time

import pytest

from conftest import ServerProcess, basalt_binary, free_port
from resp import RawConn

DENIED = (
    "-DENIED Redis is running in protected mode because protected mode is enabled and no "
    "password is set for the default user. In this mode connections are only accepted from the "
    "loopback interface. If you want to connect from external computers to Redis you may adopt "
    "one of the following solutions: 1) Just disable protected mode sending the command 'CONFIG "
    "SET protected-mode no' from the loopback interface by connecting to Redis from the same "
    "host the server is running, however MAKE SURE Redis is not publicly accessible from "
    "internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively "
    "you can just disable the protected mode by editing the Redis configuration file, and "
    "setting the protected mode option to 'no', and then restarting the server. 3) If you "
    "started the server manually just for testing, restart it with the '--protected-mode no' "
    "option. 4) Setup a an authentication password for the default user. NOTE: You only need "
    "to do one of the above things in order for the server to start accepting connections from "
    "the outside.\r\n").encode()
NOAUTH = "NOAUTH Authentication required."


def local_addresses():
    """IPv4 addresses of this machine's interfaces, from `ip`, the hostname and the route a
    datagram socket would take (no packet is sent)."""
    found = []
    try:
        out = subprocess.run(["ip", "-4", "-o", "addr", "show"], capture_output=True, text=True,
                             timeout=5).stdout
        found += re.findall(r"inet (\d+\.\d+\.\d+\.\d+)/", out)
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        found += [info[4][0] for info in socket.getaddrinfo(socket.gethostname(), None,
                                                             socket.AF_INET)]
    except OSError:
        pass
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("198.51.100.1", 9))
            found.append(s.getsockname()[0])
    except OSError:
        pass
    return found


@pytest.fixture(scope="module")
def outside_address():
    """An address of this machine outside 127.0.0.0/8 that a local client can connect through,
    so the server sees a non-loopback peer."""
    for addr in local_addresses():
        if addr.startswith("127.") or addr == "0.0.0.0":
            continue
        try:
            with socket.socket() as listener:
                listener.bind((addr, 0))
                listener.listen(1)
                with socket.create_connection(listener.getsockname(), timeout=2) as c:
                    if c.getsockname()[0] == addr:
                        return addr
        except OSError:
            continue
    pytest.skip("no usable non-loopback IPv4 address on this machine: protected mode can only "
                "be exercised by a client whose address is outside 127.0.0.0/8")


def read_until_closed(addr, port, send=b"PING\r\n"):
    with socket.create_connection((addr, port), timeout=5) as s:
        try:
            s.sendall(send)
        except OSError:
            pass
        data = b""
        while True:
            try:
                chunk = s.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            data += chunk
        return data


def test_protected_mode_refuses_outside_clients(start_server, outside_address):
    s = start_server(args=[("bind", "0.0.0.0")])
    assert read_until_closed(outside_address, s.port) == DENIED
    with RawConn(s.port) as c:  # loopback clients are welcome
        assert c.call("PING") == ("+", b"PONG")
        assert c.call("CONFIG", "GET", "protected-mode") == ("*", [
            ("$", b"protected-mode"), ("$", b"yes")])


def test_protected_mode_counts_only_the_default_users_password(start_server, outside_address):
    s = start_server(args=[("bind", "0.0.0.0")])
    with RawConn(s.port) as admin:
        # another user's password does not lift protected mode (Redis's rule)
        assert admin.call("ACL", "SETUSER", "alice", "on", ">pw", "~*", "+@all") == ("+", b"OK")
        assert read_until_closed(outside_address, s.port) == DENIED
        # a password for the default user does
        assert admin.call("ACL", "SETUSER", "default", ">secret") == ("+", b"OK")
    with RawConn(s.port, host=outside_address) as c:
        assert c.call("PING") == ("-", NOAUTH)
        assert c.call("AUTH", "alice", "pw") == ("+", b"OK")
        assert c.call("PING") == ("+", b"PONG")


def test_requirepass_or_protected_mode_no_let_outside_clients_in(start_server, outside_address):
    s = start_server(args=[("bind", "0.0.0.0"), ("requirepass", "s3cret")])
    with RawConn(s.port, host=outside_address) as c:
        assert c.call("PING") == ("-", NOAUTH)
        assert c.call("AUTH", "s3cret") == ("+", b"OK")
        assert c.call("CONFIG", "SET", "requirepass", "") == ("+", b"OK")
        assert c.call("PING") == ("+", b"PONG")  # connected clients stay
    assert read_until_closed(outside_address, s.port) == DENIED
    with RawConn(s.port) as admin:
        assert admin.call("CONFIG", "SET", "protected-mode", "no") == ("+", b"OK")
    with RawConn(s.port, host=outside_address) as c:
        assert c.call("PING") == ("+", b"PONG")


@pytest.mark.basalt_only  # redis-server's built-in default is "bind * -::*"
def test_default_bind_is_loopback_only(outside_address):
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="basalt-it-bind-") as root:
        log = open(os.path.join(root, "server.log"), "wb")
        proc = subprocess.Popen([basalt_binary(), "--port", str(port), "--dir",
                                 os.path.join(root, "data")], stdout=log,
                                stderr=subprocess.STDOUT, cwd=root)
        try:
            deadline = time.monotonic() + 15
            while True:
                try:
                    with RawConn(port) as c:
                        assert c.call("PING") == ("+", b"PONG")
                        assert c.call("CONFIG", "GET", "bind") == ("*", [
                            ("$", b"bind"), ("$", b"127.0.0.1")])
                    break
                except OSError:
                    assert proc.poll() is None and time.monotonic() < deadline, "no start"
                    time.sleep(0.05)
            with pytest.raises(ConnectionRefusedError):
                socket.create_connection((outside_address, port), timeout=5).close()
        finally:
            proc.terminate()
            proc.wait(30)
            log.close()


# --------------------------------------------------------------------------
# rename-command
# --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def renamed(start_module_server):
    return start_module_server(args=[("rename-command", ("flushall", "wipe-everything")),
                                     ("rename-command", ("CONFIG", ""))], name="renamed")


def test_renamed_command_answers_to_its_new_name_only(renamed):
    with RawConn(renamed.port) as c:
        assert c.call("SET", "k", "v") == ("+", b"OK")
        assert c.call("FLUSHALL") == (
            "-", "ERR unknown command 'FLUSHALL', with args beginning with: ")
        assert c.call("GET", "k") == ("$", b"v")
        assert c.call("WIPE-EVERYTHING") == ("+", b"OK")
        assert c.call("GET", "k") == ("$", None)


def test_command_renamed_to_nothing_is_gone(renamed):
    with RawConn(renamed.port) as c:
        assert c.call("CONFIG", "GET", "port") == (
            "-", "ERR unknown command 'CONFIG', with args beginning with: 'GET' 'port' ")


def test_command_reflects_renames(renamed, server):
    renamed_client = renamed.client(callbacks=False)
    plain_client = server.client(callbacks=False)
    try:
        # disabled commands leave COMMAND; renamed ones are found under the new name and, as in
        # Redis, described under the original one
        assert renamed_client.execute_command("COMMAND", "COUNT") == (
            plain_client.execute_command("COMMAND", "COUNT") - 1)
        info = renamed_client.execute_command("COMMAND", "INFO", "wipe-everything", "flushall",
                                              "config")
        assert info[0][0] == "flushall" and info[1:] == [None, None]
        names = renamed_client.execute_command("COMMAND", "LIST")
        assert "config" not in names and "config|get" not in names and "get" in names
        assert len(renamed_client.execute_command("COMMAND")) == (
            renamed_client.execute_command("COMMAND", "COUNT"))
    finally:
        renamed_client.close()
        plain_client.close()


def test_acl_rules_keep_the_original_names(renamed):
    with RawConn(renamed.port) as c:
        assert c.call("ACL", "SETUSER", "u", "+flushall", "+config|get") == ("+", b"OK")
        assert c.call("ACL", "SETUSER", "u", "+wipe-everything") == (
            "-", "ERR Error in ACL SETUSER modifier '+wipe-everything': Unknown command or "
                 "category name in ACL")
        assert c.call("ACL", "SETUSER", "v", "+get") == ("+", b"OK")
        assert c.call("ACL", "DRYRUN", "v", "wipe-everything") == (
            "$", b"This user has no permissions to run the 'flushall' command")
        assert c.call("ACL", "DELUSER", "u", "v") == (":", 2)


@pytest.mark.parametrize("rename,message", [
    (("nosuch", "x"), "No such command in rename-command"),
    (("get", "set"), "Target command name already exists"),
])
def test_bad_rename_stops_startup(target, rename, message):
    s = ServerProcess(target, args=[("rename-command", rename)], name="badrename")
    try:
        with pytest.raises(RuntimeError, match="exited with code 1"):
            s.start(retries=0)
        assert message in s.log_tail()
    finally:
        s.cleanup()


def test_renaming_twice_is_refused(target):
    s = ServerProcess(target, args=[("rename-command", ("get", "x")),
                                    ("rename-command", ("get", "y"))], name="badrename")
    try:
        with pytest.raises(RuntimeError, match="exited with code 1"):
            s.start(retries=0)
        assert "No such command in rename-command" in s.log_tail()
    finally:
        s.cleanup()
