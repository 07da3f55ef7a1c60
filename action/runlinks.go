package action

import (
	"context"
	"fmt"
	"strconv"

	"github.com/lablup/perfbot/bot/gh"
	"github.com/lablup/perfbot/bot/publish"
	"github.com/lablup/perfbot/bot/report"
)

// tracesPrefix starts the name the workflows give a run's traces artifact
// (perfbot-traces-REQUEST_ID, examples/workflows).
const tracesPrefix = "perfbot-traces-"

// runLinks are the links of the workflow run this step is part of, for the final
// status comment and check run: the run's page (GITHUB_SERVER_URL, GITHUB_REPOSITORY,
// GITHUB_RUN_ID) and, when the run uploaded one, its traces artifact's page (from the
// run's artifacts, read with c; without c, or when GitHub does not answer, only the
// run). None outside Actions.
func (s *step) runLinks(ctx context.Context, c *gh.Client) []report.Link {
	id, err := strconv.ParseInt(s.rt.Getenv("GITHUB_RUN_ID"), 10, 64)
	if err != nil || id <= 0 || s.repo.Owner == "" {
		return nil
	}
	server := s.serverURL
	if server == "" {
		server = "https://github.com"
	}
	run := fmt.Sprintf("%s/%s/actions/runs/%d", server, s.repo, id)
	links := []report.Link{{Text: publish.RunLinkText, URL: run}}
	if c == nil {
		return links
	}
	list, err := c.RunArtifacts(ctx, s.repo, id)
	if err != nil {
		s.rt.Annotate(Annotation{Level: Warning, Title: "perfbot: the traces artifact is not linked", Message: err.Error()})
		return links
	}
	var names []string
	if s.in.RequestID != "" {
		names = append(names, tracesPrefix+s.in.RequestID)
	}
	if a, ok := gh.FindArtifact(list, tracesPrefix, names...); ok {
		links = append(links, report.Link{Text: publish.TracesLinkText, URL: gh.ArtifactURL(run, a.ID)})
	}
	return links
}
