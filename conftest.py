"""Repository-wide pytest configuration: Hypothesis profiles.

``HYPOTHESIS_PROFILE=ci`` (set by .ci/run) derandomizes Hypothesis so a CI run is
reproducible; locally the default profile explores new examples every run, and
``thorough`` searches much longer. ``floors`` (set by .ci/lowest) is ``ci`` with a
tenth of the examples: that run checks the oldest dependencies work, and the search
itself ran in the main job.
"""

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "floors",
    parent=settings.get_profile("ci"),
    max_examples=10,
)
settings.register_profile("default", deadline=None)
# For a deeper search by hand: HYPOTHESIS_PROFILE=thorough ./dev test tests/policy tests/text
settings.register_profile("thorough", max_examples=3000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
