"""``Authorization: Token <key>`` against hashed keys, with expiry and revocation."""

from __future__ import annotations

from django.utils import timezone
from rest_framework import authentication, exceptions

from hxportal.models import ApiToken, hash_token

MAX_KEY_LENGTH = 200


class HashedTokenAuthentication(authentication.BaseAuthentication):
    keyword = "Token"

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).split()
        if not header or header[0].lower() != self.keyword.lower().encode():
            return None
        if len(header) != 2:
            raise exceptions.AuthenticationFailed("Authorization header must be 'Token <key>'.")
        try:
            key = header[1].decode("ascii")
        except UnicodeDecodeError as exc:
            raise exceptions.AuthenticationFailed("Token contains invalid characters.") from exc
        if len(key) > MAX_KEY_LENGTH:
            raise exceptions.AuthenticationFailed("Invalid token.")
        token = (ApiToken.objects.select_related("user")
                 .filter(key_hash=hash_token(key)).first())
        if token is None or not token.user.is_active:
            raise exceptions.AuthenticationFailed("Invalid token.")
        if token.revoked_at is not None:
            raise exceptions.AuthenticationFailed("Token has been revoked.")
        if token.expires_at is not None and token.expires_at <= timezone.now():
            raise exceptions.AuthenticationFailed("Token has expired.")
        now = timezone.now()
        if token.last_used_at is None or (now - token.last_used_at).total_seconds() > 60:
            ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        return token.user, token

    def authenticate_header(self, request) -> str:
        return self.keyword


from hxportal.api import schema as _schema  # noqa: E402,F401  registers the OpenAPI scheme
