package server

import "time"

// SetHTTPTimeouts sets the read and write timeouts Serve gives its HTTP server
// (2 min each by default), before Serve.
func SetHTTPTimeouts(s *Server, read, write time.Duration) {
	s.readTimeout, s.writeTimeout = read, write
}

// HTTPTimeouts returns the read and write timeouts Serve gives its HTTP server.
func HTTPTimeouts(s *Server) (read, write time.Duration) { return s.readTimeout, s.writeTimeout }
