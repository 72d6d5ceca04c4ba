package mcpdemo

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
	"image/png"
)

// DemoPNG returns the 2x2 PNG the image and mixed tools send: red, green,
// blue and white pixels, so a projection that decodes it can check colours.
func DemoPNG() []byte {
	img := image.NewNRGBA(image.Rect(0, 0, 2, 2))
	img.Set(0, 0, color.NRGBA{R: 255, A: 255})
	img.Set(1, 0, color.NRGBA{G: 255, A: 255})
	img.Set(0, 1, color.NRGBA{B: 255, A: 255})
	img.Set(1, 1, color.NRGBA{R: 255, G: 255, B: 255, A: 255})
	var buf bytes.Buffer
	// Encoding an in-memory image into a bytes.Buffer cannot fail.
	_ = png.Encode(&buf, img)
	return buf.Bytes()
}

// demoWAVSamples is 10 ms of 8 kHz audio: short, but a real waveform.
const demoWAVSamples = 80

// DemoWAV returns the mono 8-bit 8 kHz PCM WAV the audio and mixed tools
// send: a square wave, so the payload is not all silence.
func DemoWAV() []byte {
	const sampleRate = 8000
	var buf bytes.Buffer
	le := func(v any) { _ = binary.Write(&buf, binary.LittleEndian, v) }
	buf.WriteString("RIFF")
	le(uint32(36 + demoWAVSamples))
	buf.WriteString("WAVE")
	buf.WriteString("fmt ")
	le(uint32(16))         // fmt chunk size
	le(uint16(1))          // PCM
	le(uint16(1))          // mono
	le(uint32(sampleRate)) // sample rate
	le(uint32(sampleRate)) // byte rate = rate * channels * bytes per sample
	le(uint16(1))          // block align
	le(uint16(8))          // bits per sample
	buf.WriteString("data")
	le(uint32(demoWAVSamples))
	for i := range demoWAVSamples {
		if (i/8)%2 == 0 {
			buf.WriteByte(0xC0)
		} else {
			buf.WriteByte(0x40)
		}
	}
	return buf.Bytes()
}

// bigTextPattern is printable ASCII with a newline, so the big tool's
// output is valid UTF-8 of exactly the requested byte count.
const bigTextPattern = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ.\n"

// BigText returns the deterministic text of n bytes that the big tool sends.
func BigText(n int) string {
	if n <= 0 {
		return ""
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = bigTextPattern[i%len(bigTextPattern)]
	}
	return string(b)
}
