import os

from hypothesis import HealthCheck, settings

# A fixed profile in CI: derandomized, so a run is reproducible; "dev" explores more.
settings.register_profile(
    "ci", max_examples=40, derandomize=True, deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=100, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
