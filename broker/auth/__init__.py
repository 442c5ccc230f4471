"""Authentication of clients (issue 17): TLS listeners and their certificate principals, and SASL
(PLAIN, SCRAM-SHA-256/512, OAUTHBEARER) exchanged on a connection before any other request.

`listener_security.py` builds what one listener needs once at start; `gate.py` is the per-connection
SASL state machine the server consults; the mechanisms are plain objects fed tokens (`mechanisms/`).
What comes out is the connection's principal (`ctx.principal`, `User:ANONYMOUS` when none).
"""
