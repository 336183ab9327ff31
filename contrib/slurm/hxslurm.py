"""Shared helpers of the hxportal Slurm scripts (hx-sbatch, hx-prolog-bench, hx-job-done,
hx-topology).

Standard library only and Python 3.8+: the scripts run on login and compute nodes
without the portal's virtualenv. Copy this file next to the scripts (they import it
from their own directory).

* :class:`Portal`: a tiny JSON client for the hxportal REST API (``Token`` auth,
  errors as :class:`PortalError` carrying the API's ``detail`` / ``errors``).
* :class:`Log`: one line per event to stderr and appended to a log file.
* :func:`expand_hostlist` / :func:`compress_hostlist`: a small Slurm hostlist
  implementation, used when ``scontrol`` is not there. It expands any number of
  bracket groups per name (``r[1-2]n[01-02]``) and compresses on the *last* run of
  digits, keeping zero padding (``hx001,hx002,hx004`` -> ``hx[001-002,004]``), which
  is the form Slurm and ClusterShell print for flat node names.
* :func:`parse_slurm_time`: ``--time`` values (``MM``, ``MM:SS``, ``HH:MM:SS``,
  ``D-HH``, ``D-HH:MM``, ``D-HH:MM:SS``) to seconds.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Iterable

DEFAULT_PORTAL = "http://localhost:8000"
DEFAULT_TOKEN_FILE = "~/.config/hxportal/token"  # noqa: S105  a path, not a secret
CACHE_DIR = "~/.cache/hxportal"


# --------------------------------------------------------------------------- logging
class Log:
    """``log("...")``: ``<prog>: ...`` on stderr, a time-stamped line in the log file.

    The log file is ``$HX_LOG`` or ``~/.cache/hxportal/<prog>.log``; a file that
    cannot be written is skipped silently (the stderr line is the fallback)."""

    def __init__(self, prog: str, path: str | None = None, quiet: bool = False) -> None:
        self.prog = prog
        self.quiet = quiet
        self.path = os.path.expanduser(
            path or os.environ.get("HX_LOG") or os.path.join(CACHE_DIR, prog + ".log"))

    def __call__(self, message: str) -> None:
        if not self.quiet:
            sys.stderr.write(f"{self.prog}: {message}\n")
            sys.stderr.flush()
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        try:
            os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
            with open(self.path, "a", encoding="utf-8") as handle:
                handle.write(f"{stamp} {self.prog}[{os.getpid()}]: {message}\n")
        except OSError:
            pass


# --------------------------------------------------------------------------- portal
class PortalError(Exception):
    """The portal could not be reached or answered with an error."""

    def __init__(self, message: str, status: int | None = None,
                 body: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.body = body or {}

    @property
    def unreachable(self) -> bool:
        return self.status is None


def read_token(token: str | None = None, token_file: str | None = None) -> str:
    """The API key: ``token``, else the ``--token-file``, else ``$HX_TOKEN``, else the
    file ``$HX_TOKEN_FILE`` (default ``~/.config/hxportal/token``), else empty."""
    if token:
        return token.strip()
    if not token_file and os.environ.get("HX_TOKEN"):
        return os.environ["HX_TOKEN"].strip()
    path = token_file or os.environ.get("HX_TOKEN_FILE") or DEFAULT_TOKEN_FILE
    try:
        with open(os.path.expanduser(path), encoding="utf-8") as handle:
            return handle.read().strip()
    except OSError:
        return ""


def portal_url(url: str | None = None) -> str:
    return (url or os.environ.get("HX_PORTAL_URL") or DEFAULT_PORTAL).rstrip("/")


def _error_message(status: int, body: dict[str, Any], raw: str) -> str:
    detail = body.get("detail") if isinstance(body, dict) else None
    errors = body.get("errors") if isinstance(body, dict) else None
    text = f"HTTP {status}"
    if detail:
        text += f": {detail}"
    if isinstance(errors, dict) and errors:
        parts = []
        for field, problems in errors.items():
            if isinstance(problems, list):
                problems = "; ".join(str(p) for p in problems)
            parts.append(f"{field}: {problems}")
        text += " (" + ", ".join(parts) + ")"
    elif not detail and raw:
        text += ": " + raw.strip()[:200]
    return text


def _http_error(exc: urllib.error.HTTPError) -> PortalError:
    """A portal error answer as a PortalError with its status and JSON body (``{}`` when
    the body is not a JSON object)."""
    text = exc.read().decode("utf-8", "replace")
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = {}
    if not isinstance(parsed, dict):
        parsed = {}
    return PortalError(_error_message(exc.code, parsed, text), exc.code, parsed)


class Portal:
    """A JSON client for ``<url>/api/v1/``."""

    def __init__(self, url: str | None = None, token: str = "",
                 timeout: float | None = None) -> None:
        self.url = portal_url(url)
        self.token = token
        self.timeout = timeout if timeout is not None else float(
            os.environ.get("HX_HTTP_TIMEOUT", "10"))

    def request(self, method: str, path: str, body: Any = None,
                query: dict[str, Any] | None = None, raw: bool = False) -> Any:
        """Send one request; return the decoded JSON (or text with ``raw``)."""
        req = self._build(method, path, body, query, raw)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as response:
                payload = response.read().decode("utf-8", "replace")
        except urllib.error.HTTPError as exc:
            raise _http_error(exc) from exc
        except (urllib.error.URLError, OSError, ValueError) as exc:
            reason = getattr(exc, "reason", exc)
            raise PortalError(f"portal {self.url} unreachable: {reason}") from exc
        if raw:
            return payload
        try:
            return json.loads(payload) if payload else {}
        except ValueError as exc:
            raise PortalError(f"portal answered non-JSON: {payload[:200]!r}", 200) from exc

    def _build(self, method: str, path: str, body: Any, query: dict[str, Any] | None,
               raw: bool) -> urllib.request.Request:
        """The HTTP request: URL under ``/api/v1/``, token, JSON body."""
        url = self.url + "/api/v1/" + path.lstrip("/")
        if query:
            url += "?" + urllib.parse.urlencode(query)
        if not url.startswith(("http://", "https://")):
            raise PortalError(f"portal URL must be http(s): {self.url!r}")
        data = None
        headers = {"Accept": "text/plain" if raw else "application/json",
                   "User-Agent": "hxportal-slurm/1"}
        if self.token:
            headers["Authorization"] = "Token " + self.token
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        return urllib.request.Request(url, data=data, headers=headers, method=method)

    def get(self, path: str, **query: Any) -> Any:
        return self.request("GET", path, query=query or None)

    def post(self, path: str, body: Any = None) -> Any:
        return self.request("POST", path, body if body is not None else {})


def portal_from_args(args: Any) -> Portal:
    return Portal(getattr(args, "portal", None),
                  read_token(None, getattr(args, "token_file", None)))


def job_reference(portal: Portal, log: Log, job: str | None = None) -> int | str | None:
    """This Slurm job in the portal, from (first found): ``job`` (a portal id or an
    external id, as given), ``$HX_PORTAL_JOB`` (portal id), the recommendation in
    ``$HX_RECOMMENDATION`` or in ``$SLURM_JOB_COMMENT`` once accepted (portal id), else
    ``$SLURM_JOB_ID`` (an external id). An ``int`` is a portal id."""
    env = os.environ
    if job:
        return job
    if env.get("HX_PORTAL_JOB", "").isdigit():
        return int(env["HX_PORTAL_JOB"])
    rec_id = env.get("HX_RECOMMENDATION", "")
    if not rec_id.isdigit():
        match = re.search(r"hxportal-recommendation=(\d+)", env.get("SLURM_JOB_COMMENT", ""))
        rec_id = match.group(1) if match else ""
    if rec_id:
        try:
            rec = portal.get(f"recommendations/{rec_id}/")
            if rec.get("job"):
                return int(rec["job"])
            log(f"recommendation {rec_id} was not accepted: no portal job from it")
        except PortalError as exc:
            log(f"cannot read recommendation {rec_id}: {exc}")
    return env.get("SLURM_JOB_ID") or None


def resolve_portal_job(portal: Portal, log: Log, job: str | None = None) -> int | None:
    """The portal id of this job (see :func:`job_reference`); an external id is looked up
    (like the API: external id first, then a portal id); ``None`` when nothing matches."""
    ref = job_reference(portal, log, job)
    if ref is None or isinstance(ref, int):
        return ref
    found = _by_external(portal, log, ref)
    if found is None and ref.isdigit() and len(ref) < 19 and job:
        return int(ref)
    return found


def _results(page: Any) -> list[dict[str, Any]]:
    if isinstance(page, dict):
        return list(page.get("results") or [])
    return list(page or [])


def _by_external(portal: Portal, log: Log, ref: str) -> int | None:
    try:
        found = _results(portal.get("jobs/", external_id=ref))
    except PortalError as exc:
        log(f"cannot look up job {ref!r}: {exc}")
        return None
    if len(found) == 1:
        return int(found[0]["id"])
    if found:
        log(f"{len(found)} portal jobs have external id {ref!r}; pass --job <portal id>")
    return None


# --------------------------------------------------------------------------- hostlists
_NUMBERED = re.compile(r"^(.*?)(\d+)(\D*)$")


def _split_top(text: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def _expand_one(item: str) -> list[str]:
    open_at = item.find("[")
    if open_at < 0:
        return [item]
    close_at = item.find("]", open_at)
    if close_at < 0:
        raise ValueError(f"unbalanced brackets in {item!r}")
    head, body, tail = item[:open_at], item[open_at + 1:close_at], item[close_at + 1:]
    out = []
    for part in body.split(","):
        part = part.strip()
        if "-" in part:
            low, high = part.split("-", 1)
            width = len(low)
            if not (low.isdigit() and high.isdigit()) or int(high) < int(low):
                raise ValueError(f"bad range {part!r} in {item!r}")
            values = [str(v).zfill(width) for v in range(int(low), int(high) + 1)]
        elif part.isdigit():
            values = [part]
        else:
            raise ValueError(f"bad range {part!r} in {item!r}")
        for value in values:
            out.extend(_expand_one(head + value + tail))
    return out


def expand_hostlist(text: str) -> list[str]:
    """``hx[001-003,007],login1`` -> the names, in order, without duplicates."""
    seen: dict[str, None] = {}
    for item in _split_top(text or ""):
        for name in _expand_one(item):
            seen.setdefault(name, None)
    return list(seen)


def _ranges(numbers: list[tuple[int, str]]) -> str:
    parts, i = [], 0
    while i < len(numbers):
        j = i
        while j + 1 < len(numbers) and numbers[j + 1][0] == numbers[j][0] + 1:
            j += 1
        parts.append(numbers[i][1] if i == j else f"{numbers[i][1]}-{numbers[j][1]}")
        i = j + 1
    return ",".join(parts)


def compress_hostlist(names: Iterable[str]) -> str:
    """The names as a Slurm hostlist, grouped on the last run of digits.

    A zero-padded number (``007``) fixes its group's width; an unpadded one joins
    the group of its own width when there is one (``099`` and ``100`` share
    ``hx[099-100]``), else the unpadded group."""
    by_stem: dict[tuple[str, str], list[str]] = {}
    plain: list[str] = []
    for name in names:
        match = _NUMBERED.match(name)
        if not match:
            if name not in plain:
                plain.append(name)
            continue
        head, digits, tail = match.groups()
        by_stem.setdefault((head, tail), []).append(digits)
    out = sorted(plain)
    for (head, tail), numbers in sorted(by_stem.items()):
        padded = {len(d) for d in numbers if len(d) > 1 and d.startswith("0")}
        groups: dict[int, dict[int, str]] = {}
        for digits in numbers:
            width = len(digits) if (len(digits) in padded) else 0
            groups.setdefault(width, {})[int(digits)] = digits
        for _width, group in sorted(groups.items()):
            ordered = sorted(group.items())
            if len(ordered) == 1:
                out.append(head + ordered[0][1] + tail)
            else:
                out.append(f"{head}[{_ranges(ordered)}]{tail}")
    return ",".join(out)


def scontrol_hostnames(hostlist: str, log: Log | None = None) -> list[str]:
    """Expand with ``scontrol show hostnames`` when it is there, else ourselves."""
    if not hostlist:
        return []
    scontrol = shutil.which(os.environ.get("HX_SCONTROL", "scontrol"))
    if scontrol:
        try:
            done = subprocess.run([scontrol, "show", "hostnames", hostlist],
                                  capture_output=True, text=True, timeout=30, check=True)
            names = [line.strip() for line in done.stdout.splitlines() if line.strip()]
            if names:
                return names
        except (OSError, subprocess.SubprocessError) as exc:
            if log:
                log(f"scontrol show hostnames failed ({exc}); expanding ourselves")
    return expand_hostlist(hostlist)


def shrink_job(job_id: str, keep: list[str], log: Log) -> bool:
    """Give a running job's other nodes back to Slurm: ``scontrol update
    JobId=<id> NodeList=<keep>``. True when Slurm did it."""
    scontrol = shutil.which(os.environ.get("HX_SCONTROL", "scontrol"))
    if not (scontrol and job_id.isdigit() and keep):
        log("cannot release nodes: no scontrol, job id or nodes to keep")
        return False
    try:
        done = subprocess.run([scontrol, "update", f"JobId={job_id}",
                               f"NodeList={compress_hostlist(keep)}"],
                              capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        log(f"scontrol update failed ({exc}); the dropped nodes stay with the job")
        return False
    if done.returncode:
        first = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[0]
        log(f"Slurm did not shrink job {job_id} ({first[:200]}); the dropped nodes stay "
            "with the job")
        return False
    return True


# --------------------------------------------------------------------------- slurm time
def parse_slurm_time(text: str) -> float | None:
    """Seconds of a Slurm ``--time`` value; ``None`` for UNLIMITED, INFINITE or junk."""
    text = (text or "").strip()
    days = 0
    if "-" in text:
        day_text, text = text.split("-", 1)
        if not day_text.isdigit():
            return None
        days = int(day_text)
        fields = text.split(":")
        if not all(f.isdigit() for f in fields) or len(fields) > 3:
            return None
        hms = [int(f) for f in fields] + [0] * (3 - len(fields))
        return float(days * 86400 + hms[0] * 3600 + hms[1] * 60 + hms[2])
    fields = text.split(":")
    if not text or not all(f.isdigit() for f in fields) or len(fields) > 3:
        return None
    values = [int(f) for f in fields]
    if len(values) == 1:
        return float(values[0] * 60)
    if len(values) == 2:
        return float(values[0] * 60 + values[1])
    return float(values[0] * 3600 + values[1] * 60 + values[2])


def env_float(name: str) -> float | None:
    value = os.environ.get(name, "").strip()
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        return None
