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

	"github.com/fsnotify/fsnotify"
	"github.com/hashicorp/go-hclog"
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

// watcher reports changes to configuration files through fsnotify
// (inotify on Linux, kqueue on macOS and BSD, ReadDirectoryChangesW on
// Windows). It watches the directory, not the file: editors replace files
// by renaming a new one over them, which a watch on the old file would
// miss.
type watcher struct {
	fs   *fsnotify.Watcher
	file string // the watched file's base name; "" = every *.hcl in the directory
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
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("start file watcher: %w", err)
	}
	if err := fw.Add(dir); err != nil {
		_ = fw.Close()
		return nil, fmt.Errorf("watch directory %s: %w", dir, err)
	}
	return &watcher{fs: fw, file: file}, nil
}

func (w *watcher) run(ctx context.Context, changed func(name string), log hclog.Logger) {
	defer w.fs.Close()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.fs.Events:
			if !ok {
				return
			}
			// Chmod alone changes no content (and some tools touch
			// attributes constantly); every other operation may.
			if ev.Op == fsnotify.Chmod {
				continue
			}
			if name := filepath.Base(ev.Name); w.relevant(name) {
				changed(name)
			}
		case err, ok := <-w.fs.Errors:
			if !ok {
				return
			}
			// An overflow loses events, never the watch: treat it as a
			// change so nothing is missed; anything else is logged and
			// watching goes on.
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				changed("(event queue overflowed)")
				continue
			}
			log.Error("configuration watch error", "error", err)
		}
	}
}

func (w *watcher) relevant(name string) bool {
	if w.file != "" {
		return name == w.file
	}
	return strings.HasSuffix(name, ".hcl") && !strings.HasPrefix(name, ".")
}
