package server

import "context"

// SetFault makes the server ask f at its fault-injection steps (StepCheckRunCreated):
// an error f returns stops the delivery at that step, as a kill would.
func SetFault(s *Server, f func(step string) error) { s.commands.fault.Store(&f) }

// Live refreshes the status comments of the running requests now, as the server does
// every Options.LiveEvery.
func Live(s *Server, ctx context.Context) { s.runs.live(ctx) }
