package reload

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"golang.org/x/sys/unix"
)

// Options configures Run.
type Options struct {
	// Path is the configuration file or directory, as given to config.Load.
	Path string
	// Watch turns on reloading when a configuration file changes.
	Watch bool
	// Signal turns on reloading on SIGHUP.
	Signal bool
	// Debounce coalesces bursts (an editor's write, rename and chmod);
	// 0 means 200 ms.
	Debounce time.Duration
	// Logger; nil discards.
	Logger hclog.Logger
	// Ready, if set, is called once the triggers are installed (tests wait
	// on it instead of guessing when a change would be noticed).
	Ready func()
}

// Run calls reload once per trigger (after the debounce) until ctx is
// done. Calls never overlap. It returns nil when ctx ends, or an error if
// watching could not start.
func Run(ctx context.Context, opts Options, reload func()) error {
	if opts.Debounce <= 0 {
		opts.Debounce = 200 * time.Millisecond
	}
	log := opts.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	triggers := make(chan string, 1)
	fire := func(why string) {
		select {
		case triggers <- why:
		default: // one pending trigger is enough
		}
	}

	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	if opts.Signal {
		hup := make(chan os.Signal, 1)
		signal.Notify(hup, syscall.SIGHUP)
		defer signal.Stop(hup)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-hup:
					fire("SIGHUP")
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	if opts.Watch {
		w, err := newWatcher(opts.Path)
		if err != nil {
			return fmt.Errorf("watching %s: %w", opts.Path, err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.run(ctx, func(name string) { fire("changed: " + name) }, log)
		}()
	}

	if opts.Ready != nil {
		opts.Ready()
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case why := <-triggers:
			// Let the burst settle, then take whatever else arrived.
			t := time.NewTimer(opts.Debounce)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil
			case <-t.C:
			}
			select {
			case <-triggers:
			default:
			}
			log.Info("reloading configuration", "trigger", why)
			reload()
		}
	}
}

// watcher reports changes to configuration files through inotify. It
// watches the directory, not the file: editors replace files by renaming
// a new one over them, which a watch on the old inode would miss.
type watcher struct {
	f    *os.File // the inotify descriptor, non-blocking, closed to stop reads
	file string   // the watched file's base name; "" = every *.hcl in the directory
}

func newWatcher(path string) (*watcher, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	dir, file := path, ""
	if !fi.IsDir() {
		dir, file = filepath.Dir(path), filepath.Base(path)
	}
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("inotify: %w", err)
	}
	mask := uint32(unix.IN_CLOSE_WRITE | unix.IN_MOVED_TO | unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_FROM)
	if _, err := unix.InotifyAddWatch(fd, dir, mask); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("inotify watch of %s: %w", dir, err)
	}
	return &watcher{f: os.NewFile(uintptr(fd), "inotify"), file: file}, nil
}

func (w *watcher) run(ctx context.Context, changed func(name string), log hclog.Logger) {
	stop := context.AfterFunc(ctx, func() { w.f.Close() })
	defer stop()
	buf := make([]byte, 64*(unix.SizeofInotifyEvent+unix.NAME_MAX+1))
	for {
		n, err := w.f.Read(buf)
		if err != nil {
			if !errors.Is(err, os.ErrClosed) && ctx.Err() == nil {
				log.Error("configuration watch stopped", "error", err)
			}
			return
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafePointer(buf[off:]))
			nameBytes := buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
			name := strings.TrimRight(string(nameBytes), "\x00")
			off += unix.SizeofInotifyEvent + int(ev.Len)
			if w.relevant(name) {
				changed(name)
			}
		}
	}
}

func (w *watcher) relevant(name string) bool {
	if w.file != "" {
		return name == w.file
	}
	return strings.HasSuffix(name, ".hcl") && !strings.HasPrefix(name, ".")
}
