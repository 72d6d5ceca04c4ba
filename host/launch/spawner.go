package launch

import (
	"context"
	"os/exec"
	"runtime"
	"sync"
)

// spawner starts processes from one goroutine locked to its OS thread.
//
// Why: Linux delivers Pdeathsig when the *thread* that forked the child
// exits, not when the host process does. The Go runtime ends a thread only
// when a goroutine exits while locked to it, and any goroutine may lock the
// thread it happens to run on (including code we do not own, or a caller
// that locked its own goroutine). Forking from an arbitrary goroutine could
// therefore kill a healthy server when some unrelated goroutine later exits
// locked on that thread. While our goroutine is locked to its thread no
// other goroutine can run there, so the thread lives exactly as long as we
// keep the goroutine. It stays alive while any process it started is
// unreaped, then unlocks (returning the thread to the runtime intact) and
// ends, so an idle launcher holds no goroutine.
type spawner struct {
	mu sync.Mutex
	// live counts starts in flight plus started processes not yet reaped.
	live int
	// requests feeds the running goroutine; nil when none runs. Closing it
	// ends that goroutine.
	requests chan spawnRequest
}

type spawnRequest struct {
	cmd    *exec.Cmd
	result chan<- error // buffered (1): the spawner never blocks on a reply
}

// start runs cmd.Start on the locked thread. On success the caller owns a
// reference and must call release exactly once, after the process has been
// reaped. ctx bounds only the wait for the spawner to accept the request;
// fork and exec themselves do not block on the child.
func (s *spawner) start(ctx context.Context, cmd *exec.Cmd) (release func(), err error) {
	s.mu.Lock()
	if s.requests == nil {
		s.requests = make(chan spawnRequest)
		go runSpawner(s.requests)
	}
	requests := s.requests
	s.live++
	s.mu.Unlock()

	result := make(chan error, 1)
	select {
	case requests <- spawnRequest{cmd: cmd, result: result}:
	case <-ctx.Done():
		s.release()
		return nil, ctx.Err()
	}
	if err := <-result; err != nil {
		s.release()
		return nil, err
	}
	return sync.OnceFunc(s.release), nil
}

func (s *spawner) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.live--
	if s.live == 0 {
		close(s.requests)
		s.requests = nil
	}
}

func runSpawner(requests <-chan spawnRequest) {
	runtime.LockOSThread()
	// Every process this thread forked has been reaped once requests is
	// closed, so unlocking (the thread survives) or not would both be safe;
	// unlocking spares the runtime a thread exit.
	defer runtime.UnlockOSThread()
	for req := range requests {
		req.result <- req.cmd.Start()
	}
}
