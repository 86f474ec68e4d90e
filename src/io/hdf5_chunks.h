/* A dataset's chunks written directly (H5Dwrite_chunk), each with the
 * Fletcher-32 checksum HDF5's filter would append, the checksums summed
 * on several threads: HDF5's filter pipeline sums them one chunk at a
 * time on the calling thread, which was a third of a snapshot's write
 * (perf, 1M bodies, 104 MB). Readers see what the filter writes: the same
 * chunks, the same checksums, checked by HDF5 on every read. */
#ifndef TFMM_HDF5_CHUNKS_H
#define TFMM_HDF5_CHUNKS_H

#include <hdf5.h>
#include <stddef.h>
#include <stdint.h>

/* HDF5's Fletcher-32 (H5Z_FILTER_FLETCHER32) of n bytes: 16-bit words,
 * the first byte the high one, a last odd byte as the high byte of a
 * word; the sums folded to 16 bits every 360 words and at the end;
 * (sum2 << 16) | sum1. */
uint32_t tfmm_hdf5_fletcher32(const unsigned char *data, size_t n);

/* The rows x row_bytes bytes of data (row-major, the file's type in
 * memory's byte order) into set, a dataset chunked by chunk_rows whole
 * rows whose only filter is Fletcher-32: each chunk (the last padded with
 * zeros to a whole chunk) and its checksum, little-endian, after it, one
 * H5Dwrite_chunk (one pwrite) a chunk, in order. shift NULL: the bytes as
 * they are; else data holds doubles (row_bytes a multiple of 8) and each
 * is written plus *shift, the bits of data[i] + *shift (a shift of 0
 * would turn -0 into +0: pass NULL for none). Returns 1 on success, 0 on
 * failure (memory, or HDF5's error). */
int tfmm_hdf5_write_chunks(hid_t set, size_t rows, size_t row_bytes,
                           size_t chunk_rows, const void *data,
                           const double *shift);

#endif
