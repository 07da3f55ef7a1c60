package fakegithub

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
)

// Recorded answers with a real HTTP answer saved as a header dump (first line
// "HTTP/2 403", then "name: value" lines) plus a body file, such as the secondary
// rate-limit answer in fixtures/github/rate-limit. The recorded content-length is
// dropped: the body file's whitespace may differ from the wire.
func Recorded(headersPath, bodyPath string) Responder {
	status, header, err := readHeaderDump(headersPath)
	var body []byte
	if err == nil && bodyPath != "" {
		body, err = os.ReadFile(bodyPath)
	}
	return Responder{err: err, fn: func(*Server, Request) Response {
		return Response{Status: status, Header: header.Clone(), Body: body}
	}}
}

func readHeaderDump(path string) (int, http.Header, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		return 0, nil, fmt.Errorf("%s: empty header dump", path)
	}
	fields := strings.Fields(sc.Text())
	if len(fields) < 2 || !strings.HasPrefix(fields[0], "HTTP/") {
		return 0, nil, fmt.Errorf("%s:1: want a status line such as \"HTTP/2 403\"", path)
	}
	status, err := strconv.Atoi(fields[1])
	if err != nil {
		return 0, nil, fmt.Errorf("%s:1: status %q: %w", path, fields[1], err)
	}
	h := http.Header{}
	for line := 2; sc.Scan(); line++ {
		text := strings.TrimRight(sc.Text(), "\r")
		if text == "" {
			continue
		}
		k, v, ok := strings.Cut(text, ":")
		if !ok {
			return 0, nil, fmt.Errorf("%s:%d: want \"name: value\"", path, line)
		}
		h.Add(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	dropWireHeaders(h)
	return status, h, sc.Err()
}

func dropWireHeaders(h http.Header) {
	for _, k := range []string{"Content-Length", "Transfer-Encoding", "Connection", "Content-Encoding"} {
		h.Del(k)
	}
}

// Interaction is one recorded request and answer of an octokit/fixtures scenario (the
// nock format: method, path, body, status, response, headers).
type Interaction struct {
	Method   string          `json:"method"`
	Path     string          `json:"path"`
	Body     json.RawMessage `json:"body"`
	Status   int             `json:"status"`
	Response json.RawMessage `json:"response"`
	Headers  map[string]any  `json:"headers"`
}

// OctokitScenario reads an octokit/fixtures normalized-fixture.json file.
func OctokitScenario(path string) ([]Interaction, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var its []Interaction
	if err := json.Unmarshal(b, &its); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for i := range its {
		its[i].Method = strings.ToUpper(its[i].Method)
	}
	return its, nil
}

// Octokit answers with the index-th recorded answer of an octokit/fixtures scenario.
func Octokit(path string, index int) Responder {
	its, err := OctokitScenario(path)
	if err == nil && (index < 0 || index >= len(its)) {
		err = fmt.Errorf("%s has %d interactions, not %d", path, len(its), index+1)
	}
	if err != nil {
		return Responder{err: err}
	}
	it := its[index]
	h := http.Header{}
	for k, v := range it.Headers {
		h.Set(k, fmt.Sprint(v))
	}
	dropWireHeaders(h)
	body := []byte(it.Response)
	if len(body) > 0 && body[0] == '"' {
		// nock stores non-JSON bodies as strings.
		var s string
		if json.Unmarshal(body, &s) == nil {
			body = []byte(s)
		}
	}
	return Responder{fn: func(*Server, Request) Response {
		return Response{Status: it.Status, Header: h.Clone(), Body: body}
	}}
}
