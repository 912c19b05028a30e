package docker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/sandtray/sandtray/engine/runtime"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/events"
	"github.com/moby/moby/client"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// Stats takes one resource sample of a container without waiting for a
// second one (one-shot), so it returns at once. The engine turns two samples
// into a CPU percentage. A container that is not running yields a zero
// sample, not an error.
func (c *Client) Stats(ctx context.Context, id string) (runtime.StatsSample, error) {
	op := "stats of container " + id
	res, err := c.api.ContainerStats(ctx, id, client.ContainerStatsOptions{Stream: false})
	if err != nil {
		return runtime.StatsSample{}, wrap(op, err)
	}
	defer res.Body.Close()
	var s container.StatsResponse
	if err := json.NewDecoder(res.Body).Decode(&s); err != nil {
		return runtime.StatsSample{}, wrap(op, err)
	}
	return sampleOf(s), nil
}

// Events streams lifecycle events of the containers carrying every given
// label. The subscription is in place when Events returns, so nothing that
// happens afterwards is missed. Both channels are closed when ctx is done
// (without an error) or when the stream breaks, in which case the error
// channel first receives the classified error. The caller must drain the
// event channel or cancel ctx.
//
// Exec actions arrive without the command Docker appends ("exec_start", not
// "exec_start: sh -c ..."), so they can be compared to constants.
func (c *Client) Events(ctx context.Context, labels map[string]string) (<-chan runtime.Event, <-chan error) {
	filters := labelFilters(labels).Add("type", string(events.ContainerEventType))
	return relayEvents(ctx, c.api.Events(ctx, client.EventsListOptions{Filters: filters}), event)
}

// relayEvents sends each of res's messages, converted, until ctx is done or
// the stream breaks; then the error channel receives the classified error
// (none when ctx ended it) and both channels close.
func relayEvents[T any](ctx context.Context, res client.EventsResult, convert func(events.Message) T) (<-chan T, <-chan error) {
	out := make(chan T)
	errc := make(chan error, 1)
	go func() {
		defer close(errc)
		defer close(out)
		for {
			select {
			case msg := <-res.Messages:
				select {
				case out <- convert(msg):
				case <-ctx.Done():
					return
				}
			case err := <-res.Err:
				if ctx.Err() == nil {
					errc <- eventsError(err)
				}
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, errc
}

// eventsError classifies the error that ended an event stream; a stream the
// daemon closed (EOF) means it went away.
func eventsError(err error) error {
	const op = "watch container events"
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%s: the daemon closed the stream: %w (%w)", op, sandbox.ErrUnavailable, err)
	}
	return wrap(op, err)
}

// event converts a daemon's container event to the runtime's words:
// Podman's "remove" is Docker's "destroy", and an exec's action loses the
// command Docker appends to it.
func event(m events.Message) runtime.Event {
	action := string(m.Action)
	switch {
	case strings.HasPrefix(action, "exec_"):
		action, _, _ = strings.Cut(action, ":")
	case action == "remove":
		action = "destroy"
	}
	return runtime.Event{ContainerID: m.Actor.ID, Action: action, Time: time.Unix(0, m.TimeNano)}
}

// Diff lists the paths of a container's filesystem that differ from its
// image. Docker lists a changed file's parent directories as changed too.
func (c *Client) Diff(ctx context.Context, id string) ([]runtime.Change, error) {
	res, err := c.api.ContainerDiff(ctx, id, client.ContainerDiffOptions{})
	if err != nil {
		return nil, wrap("diff container "+id, err)
	}
	out := make([]runtime.Change, 0, len(res.Changes))
	for _, ch := range res.Changes {
		out = append(out, runtime.Change{Path: ch.Path, Kind: changeKind(ch.Kind)})
	}
	return out, nil
}

func changeKind(k container.ChangeType) string {
	switch k {
	case container.ChangeAdd:
		return runtime.ChangeAdded
	case container.ChangeDelete:
		return runtime.ChangeDeleted
	default:
		return runtime.ChangeChanged
	}
}
