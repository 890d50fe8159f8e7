package proxy

import "net/http"

// registerManager adds the manager web UI's routes to the magic host's mux.
func (s *Server) registerManager(mux *http.ServeMux) {}
