"""A visitor's network as the per-address limits count it: an IPv4 address, an IPv6 /64."""

from __future__ import annotations

import pytest

from lnlab.serving.networks import TRUSTED_PROXIES_ENV, network, visitor


@pytest.mark.parametrize(
    ("address", "counted"),
    [
        ("192.0.2.7", "192.0.2.7"),
        # a phone's privacy addresses, one /64: one visitor
        ("2001:db8:1:2:a1b2:c3d4:e5f6:789", "2001:db8:1:2::/64"),
        ("2001:db8:1:2::ffff", "2001:db8:1:2::/64"),
        ("2001:DB8:1:2::1", "2001:db8:1:2::/64"),  # however it is written
        ("2001:db8:1:3::1", "2001:db8:1:3::/64"),  # the next /64: another visitor
        ("::ffff:192.0.2.7", "192.0.2.7"),  # IPv4 on a dual-stack socket
        ("fe80::1%eth0", "fe80::/64"),
        (" 192.0.2.7 ", "192.0.2.7"),
        ("unknown", "unknown"),  # kept as sent, bounded
        ("x" * 500, "x" * 64),
        ("", ""),
    ],
)
def test_an_ipv6_visitor_counts_as_its_64(address: str, counted: str) -> None:
    assert network(address) == counted


def test_the_visitor_is_the_proxy_s_last_entry_only_behind_a_trusted_proxy(monkeypatch):
    monkeypatch.delenv(TRUSTED_PROXIES_ENV, raising=False)
    forwarded = "203.0.113.9, 2001:db8::5"  # the first is the client's claim, the last the proxy's
    assert visitor(None, forwarded) == "2001:db8::/64"  # Streamlit: a loopback peer is None
    assert visitor("127.0.0.1", forwarded) == "2001:db8::/64"
    assert visitor("::1", forwarded) == "2001:db8::/64"
    assert visitor("198.51.100.1", forwarded) == "198.51.100.1"  # anyone may send the header
    monkeypatch.setenv(TRUSTED_PROXIES_ENV, "198.51.100.1, 198.51.100.2")
    assert visitor("198.51.100.1", forwarded) == "2001:db8::/64"
    assert visitor("2001:db8:9::1", "") == "2001:db8:9::/64"
    monkeypatch.setenv(TRUSTED_PROXIES_ENV, "172.16.0.0/12,,nonsense")  # compose's proxy
    assert visitor("172.18.0.4", forwarded) == "2001:db8::/64"
    assert visitor("198.51.100.1", forwarded) == "198.51.100.1"
    assert visitor(None, None) == ""
