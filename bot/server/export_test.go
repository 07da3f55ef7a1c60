package server

// SetFault makes the server ask f at its fault-injection steps (StepCheckRunCreated):
// an error f returns stops the delivery at that step, as a kill would.
func SetFault(s *Server, f func(step string) error) { s.commands.fault.Store(&f) }
