"""Transcript logs audited in pieces, in any process: the room behind ``agentloop_tools.logs``
and ``agentloop-tools audit --jobs``.

``_pieces`` cuts logs into byte ranges (``Unit``), audits one (``audit_log_piece``, reading
its lines through the one reader, ``agentloop_tools._transcript_log``) and puts the pieces
back in file and line order (``merge``, or ``merged_in_order`` as they come). Nothing here
imports the command line.
"""
