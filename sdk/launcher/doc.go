// Package launcher is the SDK for launcher plugins: code that starts the
// stdio MCP servers of an environment (locally, over ssh, in a container)
// and carries their stdin, stdout and stderr to the host over one
// bidirectional gRPC stream per process, or, where host and plugin can,
// hands the process's own pipes to the host.
//
// A launcher implements [Launcher]; [StartCommand] turns an *exec.Cmd into
// the [Process] Start returns, so a local launcher is a few lines:
//
//	type local struct{}
//
//	func (local) Start(_ context.Context, spec launcher.Spec) (launcher.Process, error) {
//		cmd := exec.Command(spec.Command, spec.Args...)
//		cmd.Env, cmd.Dir = spec.Environ(), spec.Dir
//		return launcher.StartCommand(cmd)
//	}
//
//	func main() { launcher.Serve(local{}) }
//
// The shim does the streaming: it sends output as soon as the process
// writes it (a short JSON line is never held back to fill a frame), writes
// stdin as it arrives, forwards close-stdin and signals, runs the stop
// sequence when the host stops the process (close stdin, SIGTERM, SIGKILL,
// with the host's waits: a [Stopper]'s own, StartCommand's being
// internal/contain's), reports the exit after the output is drained, and
// kills the process if the host abandons the stream. It never gives the process a TTY.
//
// # Host side
//
// The host dispenses a [*Client] through go-plugin with
// VersionedPlugins(nil, opts) and calls [Client.Launch], which returns a
// [*RemoteProcess]: an io.ReadWriteCloser over the child's stdout and
// stdin, plus Stderr, Wait, Kill and Pid, the method set the host's MCP
// client expects of a process. Errors match the sdk sentinels
// (sdk.ErrPluginExited when the plugin dies mid-stream, ...); a start
// failure is a [*StartError] with a kind and an excerpt of the executor's
// stderr.
//
// # Flow control and performance
//
// Nothing is buffered without bound. In the host, the receive loop hands
// each stdout frame straight to Read and waits until it is consumed; in the
// plugin, a write to the child's stdin blocks until the child reads. gRPC's
// flow control carries that back pressure across the stream. Data moves in
// frames of at most 32 KiB, sent as soon as there is data; buffers and
// frames are reused, and the only copies are the ones gRPC's encoding makes.
// Each process costs the host one goroutine and the plugin four (the
// stream's handler, one per output, one for stdin and signals), never one
// per frame.
//
// # Passing the pipes
//
// Every frame crosses goroutine hand-offs in both processes, which is
// most of what a small MCP call costs over the stream. So where the host
// can take them (Linux, unless [ClientOptions.StreamOnly]), it asks for
// the process's pipes, and the plugin offers them when all three of the
// [Process]'s stdio are *os.File pipes (as [StartCommand] makes them).
// The plugin listens on a unix socket in a fresh directory only its user
// can enter, and sends its path and a random one-time nonce over the
// stream (which go-plugin authenticates with mutual TLS). The host
// connects and presents the nonce; the plugin checks that the peer runs
// as its own user and the nonce (in constant time), and sends the three
// descriptors with SCM_RIGHTS; the host checks that they are pipes in the
// right directions and tells the plugin, over the stream, that it took
// them. Only then does the plugin close its copies. Any failure on the
// way (no offer, no socket, a wrong nonce, another user, wrong
// descriptors) leaves the process on the stream: a launch never ends in a
// half state. [RemoteProcess.Mode] says which way it went.
//
// With passed pipes, Read and Write are plain reads and writes of the
// pipes, with no goroutine in between; the stream still carries signals
// and the exit status, and still breaks when the plugin dies, so Close,
// Kill, Wait and sdk.ErrPluginExited behave as before. The process still
// dies with the plugin (StartCommand's Pdeathsig): the pipes the host
// holds do not keep it alive. The host then uses one more goroutine per
// process, which keeps stderr moving until Stderr is called, and the
// plugin two (the handler and the receiver of signals).
//
// This package must not import anything of the host, nor the MCP go-sdk.
//
// # Concurrency
//
// A [Launcher] may be asked to start several processes at once and must be
// safe for concurrent use. A [*Client] is safe for concurrent use. The
// methods of a [*RemoteProcess] may be called from different goroutines
// (one reader and one writer at a time); Close and Kill are idempotent.
package launcher
