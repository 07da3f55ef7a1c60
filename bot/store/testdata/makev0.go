//go:build ignore

// makev0 writes v0.db: a database as perfbot serve left it before the store had schema
// versions (user_version 0, the tables made by CREATE TABLE IF NOT EXISTS), holding
// webhook deliveries and requests in every state a restart has to pick up. Its clock
// is fixed, so the rows are the same on every run.
//
//	go run bot/store/testdata/makev0.go bot/store/testdata/v0.db
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/lablup/perfbot/bot/inbox"
	"github.com/lablup/perfbot/bot/queue"
	"github.com/lablup/perfbot/bot/store"
)

func main() {
	if len(os.Args) != 2 {
		log.Fatal("usage: go run makev0.go OUT.db")
	}
	if err := run(os.Args[1]); err != nil {
		log.Fatal(err)
	}
}

func run(out string) error {
	if _, err := os.Stat(out); err == nil {
		return fmt.Errorf("%s exists; remove it first", out)
	}
	ctx := context.Background()
	clock := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	now := func() time.Time { return clock }
	db, err := store.Open(ctx, out, inbox.Schema, queue.Schema)
	if err != nil {
		return err
	}
	defer db.Close()
	ib, err := inbox.New(ctx, db, now)
	if err != nil {
		return err
	}
	// Deliveries: d-1 done, d-2 failed for good, d-3 and d-4 received (pending), d-5
	// received after a failed attempt (pending, due later), d-3 delivered twice.
	for i := 1; i <= 5; i++ {
		clock = clock.Add(time.Second)
		d := inbox.Delivery{
			ID: fmt.Sprintf("0b7e4c50-0000-11f1-8000-00000000000%d", i), Event: "issue_comment", Action: "created",
			Installation: 42, Repo: "lablup/mlxcel",
			Payload: fmt.Appendf(nil, `{"action":"created","comment":{"id":%d,"body":"/profile rocm"},"issue":{"number":7}}`, 1000+i),
		}
		if _, err := ib.Put(ctx, d); err != nil {
			return err
		}
	}
	clock = clock.Add(time.Second)
	if _, err := ib.Put(ctx, inbox.Delivery{ID: "0b7e4c50-0000-11f1-8000-000000000003", Event: "issue_comment", Action: "created",
		Installation: 42, Repo: "lablup/mlxcel", Payload: []byte(`{"action":"created","comment":{"id":1003,"body":"/profile rocm"},"issue":{"number":7}}`)}); err != nil {
		return err
	}
	if err := ib.Done(ctx, "0b7e4c50-0000-11f1-8000-000000000001"); err != nil {
		return err
	}
	if err := ib.Fail(ctx, "0b7e4c50-0000-11f1-8000-000000000002", errors.New("the payload names no repository")); err != nil {
		return err
	}
	if err := ib.Retry(ctx, "0b7e4c50-0000-11f1-8000-000000000005", errors.New("GitHub answered 502"), clock.Add(time.Minute)); err != nil {
		return err
	}

	// Requests: 1 done, 2 running on gfx1151, 3 and 4 queued behind it, 5 dispatching
	// on gfx1201 (its answer lost, retried later), 6 still accepting.
	q := queue.New(db, now)
	var ids []int64
	for i := 1; i <= 6; i++ {
		clock = clock.Add(time.Second)
		host := "gfx1151"
		if i == 5 {
			host = "gfx1201"
		}
		r, _, err := q.Add(ctx, queue.Request{
			Delivery: fmt.Sprintf("0b7e4c50-0000-11f1-8000-00000000010%d", i), Repo: "lablup/mlxcel", Installation: 42,
			Issue: 7, IsPR: i == 4, CommentID: int64(2000 + i), Requester: "alice", Kind: "profile",
			Command: "/profile rocm models=qwen3-0.6b,llama3.2-1b", SHA: "6113728f27ae82c7b1a177c8d03f9e96e0adf246",
			PinnedFrom: "main", Models: []string{"qwen3-0.6b", "llama3.2-1b"}, Sampling: []string{"greedy"}, Epic: 3,
			Host: host, Workflow: "perfbot.yml", Ref: "main",
		})
		if err != nil {
			return err
		}
		ids = append(ids, r.ID)
		if err := q.SetStatusComment(ctx, r.ID, int64(3000+i)); err != nil {
			return err
		}
		if i == 6 {
			continue
		}
		if err := q.SetCheckRun(ctx, r.ID, int64(4000+i)); err != nil {
			return err
		}
		if err := q.MarkQueued(ctx, r.ID); err != nil {
			return err
		}
	}
	step := func(host string, id int64, run bool) error {
		clock = clock.Add(time.Second)
		r, ok, err := q.Claim(ctx, host)
		if err != nil {
			return err
		}
		if !ok || r.ID != id {
			return fmt.Errorf("claimed %d (%v) on %s, want %d", r.ID, ok, host, id)
		}
		if !run {
			return nil
		}
		if err := q.MarkDispatched(ctx, id); err != nil {
			return err
		}
		_, err = q.SetRun(ctx, id, 5000+id, fmt.Sprintf("https://github.com/lablup/mlxcel/actions/runs/%d", 5000+id), clock)
		return err
	}
	if err := step("gfx1151", ids[0], true); err != nil {
		return err
	}
	clock = clock.Add(10 * time.Minute)
	if _, err := q.Finish(ctx, ids[0], queue.Done, "success", "", 9*time.Minute); err != nil {
		return err
	}
	if err := step("gfx1151", ids[1], true); err != nil {
		return err
	}
	if err := step("gfx1201", ids[4], false); err != nil {
		return err
	}
	if err := q.Retry(ctx, ids[4], errors.New("dispatching: GitHub answered 502"), clock.Add(30*time.Second)); err != nil {
		return err
	}
	return db.Close()
}
