"""Plain-text responses (Slurm configuration files) next to JSON errors."""

from rest_framework.renderers import BaseRenderer, JSONRenderer


class PlainTextRenderer(BaseRenderer):
    media_type = "text/plain"
    format = "txt"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        if isinstance(data, str):
            return data.encode(self.charset)
        # errors (dicts) are still shown as JSON text
        return JSONRenderer().render(data)
