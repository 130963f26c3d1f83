"""Network safety both client-side tools share: deadlines on sockets, bodies read under a cap.

``web_fetch`` and ``web_search`` (and ``web_fetch(via=...)``, which sends to a search
API) import it; neither tool imports the other for it. Each tool words the failures
in its own results.

- ``_deadline``: a network stream whose every connect, TLS handshake, read and write
  waits at most until a deadline; the thread-bound deadline of one attempt and the
  default client built on it.
- ``_body``: a body read and decompressed by us under a byte cap and a deadline, in
  two modes (cut at the cap, or refuse what is over it or expands too far), and the
  content encodings that are decoded.
"""
