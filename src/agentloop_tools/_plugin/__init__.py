"""The pytest plugin's parts, behind the thin entry module ``agentloop_tools.pytest_plugin``.

Read from the top down: ``hooks`` (per-run state and pytest hooks) uses ``policies``
(the project and marker policies), ``cassette`` (the only module that touches vcrpy's
internals) and ``network`` (guards and replay clients); ``messages`` holds every text
the plugin shows. Only the standard library and pytest are imported at module level.
"""
