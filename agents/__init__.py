"""One module per served graph; each exports `graph` (for the server) and `make_graph`."""
