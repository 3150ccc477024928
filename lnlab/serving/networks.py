"""Where a visitor comes from, as the per-address limits count it: one network, not one address.

The limits (classes and joins in the class store, turns in lnlab.serving.fair_share, unknown
pulse codes in lnlab.ui.server.pulse) count per visitor's network. For IPv4 that is the
address: a school's router shows one to the world. An IPv6 host has a /64 of its own and
picks its addresses inside it (privacy addresses: a phone takes a new one every day or at
every reconnection, and a script may take any of 2^64), so an IPv6 visitor counts as its /64:
otherwise one phone is many visitors, and a script an unlimited number. An IPv4 address
written as IPv6 (::ffff:192.0.2.7, a dual-stack socket's) is the IPv4 address.

`visitor` reads it from the connection and X-Forwarded-For the same way for a script run
(lnlab.ui.claims) and for the app's own routes (lnlab.ui.server.pulse).
"""

from __future__ import annotations

import ipaddress
import os

TRUSTED_PROXIES_ENV = "LNLAB_TRUSTED_PROXIES"  # addresses of proxies whose X-Forwarded-For counts
IPV6_NETWORK = 64  # prefix length one IPv6 host owns (RFC 4291's interface identifiers)
MAX_ADDRESS = 64  # characters kept of what a client sent: bounds what the limits store


def network(address: str) -> str:
    """The network an address counts as: itself for IPv4, its /64 for IPv6 ("2001:db8::/64"),
    an unreadable one as sent (at most MAX_ADDRESS characters); "" stays "" (unknown)."""
    text = address.strip()[:MAX_ADDRESS] if isinstance(address, str) else ""
    try:
        parsed = ipaddress.ip_address(text.split("%", 1)[0])  # no zone: fe80::1%eth0
    except ValueError:
        return text
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:
            return str(parsed.ipv4_mapped)
        return str(ipaddress.IPv6Network((parsed, IPV6_NETWORK), strict=False))
    return str(parsed)


def _trusted(direct: str) -> bool:
    """Whether the connection comes from a proxy whose X-Forwarded-For is believed: one on
    this machine (no address: Streamlit gives none for loopback; or a loopback one), or one
    in $LNLAB_TRUSTED_PROXIES, a comma-separated list of addresses and networks
    ("10.0.0.5, 172.16.0.0/12": compose's proxy has whatever address Docker gives it)."""
    if not direct:
        return True
    try:
        address = ipaddress.ip_address(direct.split("%", 1)[0])
    except ValueError:
        return False
    if address.is_loopback:
        return True
    for entry in os.environ.get(TRUSTED_PROXIES_ENV, "").split(","):
        try:
            if address in ipaddress.ip_network(entry.strip(), strict=False):
                return True
        except ValueError:  # an empty or malformed entry trusts nobody
            continue
    return False


def visitor(direct: str | None, forwarded: str | None) -> str:
    """The visitor's network (`network`) from the connection's address and the request's
    X-Forwarded-For: behind a trusted proxy (`_trusted`) the last X-Forwarded-For entry, the
    one that proxy added (those before it are whatever the client sent); else the
    connection's. "" when unknown."""
    direct = direct if isinstance(direct, str) else ""
    forwarded = forwarded if isinstance(forwarded, str) else ""
    if forwarded and _trusted(direct):
        return network(forwarded.split(",")[-1])
    return network(direct)
