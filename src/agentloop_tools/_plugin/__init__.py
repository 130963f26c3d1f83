"""The pytest plugin's parts, behind the thin entry module ``agentloop_tools.pytest_plugin``.

Every run of the environment imports only ``scope``: whether the run uses the plugin
(the one definition), which tests it acts on, whether this pytest can host it. (The
entry module's ``Standby`` asks it, and waits for a first use.) The rest loads in a run
that uses the plugin, read from the top down:

- ``hooks``: pytest's hooks, each a few lines forwarding to the session.
- ``session``: the run's state, and each moment of a test between the hooks.
- ``gate``: every pass/fail decision of ours, behind ``gate.judge``.
- ``policies``: the project policy and the ``domain_policy`` markers, read and checked,
  and the run's other settings (provider, refused attempts, cassette age).
- ``faults``: the ``web_faults`` markers, read and checked (the faults are the core's).
- ``budget``: the ``agent_budget`` markers and ini key, and the recording spend cap.
- ``markers``: our markers on a test's path, found and placed one way for all three.
- ``cassette``: our serializer, matcher, scrubbing and checks on pytest-recording's VCR
  (most of what touches vcrpy's internals; ``replay_speed``, ``budget`` and ``gate``
  reach into a vcrpy cassette too).
- ``replay_speed``: cassettes parsed once per run, absent HTTP libraries skipped.
- ``network``: provider traffic kept local (host guards, replay clients, no backoff).
- ``agents``: what the fixtures hand a test (the environment and the agent factory).
- ``masking``: no credential in what pytest shows of a test (reprs, reports).
- ``run_report``: the run's summary lines and report files, from the test reports.
- ``drift``: evidence drift of a test that re-recorded its cassette, and whether it fails.
- ``failures``: the plugin's failures, each carrying its kind.
- ``messages``: every text the plugin shows.
- ``inert``: the plugin on a pytest older than its floor.

Only the standard library and pytest are imported at module level.
"""
