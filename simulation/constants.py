"""Limits of what the web side accepts (the CLI is not limited)."""

MAX_CYCLES = 5_000_000
MAX_ENDPOINTS = 65_536  # the engine's own bound: machines up to 16x16x16, c = 16
MAX_CONFIG_BYTES = 8_192
MAX_SWEEP_RUNS = 2_000
MAX_PRESET_RUNS = 5_000
MAX_VALUES_PER_PARAMETER = 256
MAX_NAME = 128
#: Runs of a sweep created per bulk insert.
CREATE_BATCH = 500
