package reload

import "unsafe"

// unsafePointer reads an inotify event header in place: the kernel writes
// the struct into our buffer with its native layout.
func unsafePointer(b []byte) unsafe.Pointer { return unsafe.Pointer(&b[0]) }
