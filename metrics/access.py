"""Who may read ``/metrics``: a token or a signed-in user (viewer or above), or a
scraper without credentials from an address in ``HX_METRICS_ALLOWED_NETS``.

Prometheus scrapers are often configured with neither users nor secrets, so a site
can name the networks its scrapers run in instead; everyone else signed out gets a
401, like the API.
"""

from __future__ import annotations

import ipaddress
from functools import lru_cache

from django.conf import settings

from hxportal.api.permissions import RolePermission
from hxportal.signin import client_address

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@lru_cache(maxsize=8)
def parse_networks(values: tuple[str, ...]) -> tuple[Network, ...]:
    """CIDR strings as networks; a bare address is a network of one. Raises
    ValueError naming the first value that is neither.

    >>> parse_networks(("10.0.0.0/8", "::1"))
    (IPv4Network('10.0.0.0/8'), IPv6Network('::1/128'))
    """
    out = []
    for value in values:
        try:
            out.append(ipaddress.ip_network(value.strip(), strict=False))
        except ValueError as exc:
            raise ValueError(f"{value!r} is not a network (CIDR such as 10.0.0.0/24)") from exc
    return tuple(out)


def address_allowed(address: str | None, values: tuple[str, ...]) -> bool:
    """Whether ``address`` lies in one of the networks ``values``.

    >>> address_allowed("10.1.2.3", ("10.0.0.0/8",)), address_allowed("10.1.2.3", ())
    (True, False)
    >>> address_allowed("::ffff:10.1.2.3", ("10.0.0.0/8",)), address_allowed(None, ("::/0",))
    (True, False)
    """
    if not address or not values:
        return False
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return any(ip.version == net.version and ip in net for net in parse_networks(values))


class MetricsPermission(RolePermission):
    """Credentials as anywhere in the API (role, token scope), or none from an
    allowed network."""

    def has_permission(self, request, view) -> bool:
        user = request.user
        if not (user and user.is_authenticated) and address_allowed(
                client_address(request), tuple(settings.HX_METRICS_ALLOWED_NETS)):
            return True
        return super().has_permission(request, view)
