#include "export/framepath.h"

#include <glib.h>
#include <string.h>

/* The number of leading frames s[0..len) shares with the last stack. */
static size_t shared_frames(const struct frame_path *fp, const char *s, size_t len)
{
	size_t k = 0, m = len < fp->last_len ? len : fp->last_len;
	size_t lo = 0, hi = fp->n;

	while (k + 8 <= m) {		/* a word at a time: stacks are long */
		uint64_t a, b;

		memcpy(&a, s + k, 8);
		memcpy(&b, fp->last + k, 8);
		if (a != b) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
			k += (size_t)__builtin_ctzll(a ^ b) / 8;
			goto found;
#else
			break;
#endif
		}
		k += 8;
	}
	while (k < m && s[k] == fp->last[k])
		k++;
found:
	while (lo < hi) {		/* the first frame ending after k */
		size_t mid = (lo + hi) / 2;

		if (fp->ends[mid] <= k)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* a frame ending exactly at k is shared only if the new stack has a
	 * boundary there too ("a;b" is not a prefix frame of "a;bc") */
	if (lo > 0 && fp->ends[lo - 1] == k && !(k == len || s[k] == ';'))
		lo--;
	return lo;
}

const uint32_t *frame_path_ids(struct frame_path *fp, const char *stack,
			       size_t len, bool stable, frame_id_fn id_of,
			       void *ctx, size_t *n)
{
	size_t keep = fp->last ? shared_frames(fp, stack, len) : 0;
	size_t pos = keep ? fp->ends[keep - 1] + 1 : 0;
	uint32_t id = keep ? fp->ids[keep - 1] : UINT32_MAX;

	fp->n = keep;
	if (!stable) {
		if (len > fp->copy_cap) {
			fp->copy_cap = len * 2;
			fp->copy = g_realloc(fp->copy, fp->copy_cap);
		}
		memcpy(fp->copy, stack, len);
		stack = fp->copy;
	}
	while (len && pos <= len) {
		const char *semi = memchr(stack + pos, ';', len - pos);
		size_t end = semi ? (size_t)(semi - stack) : len;

		id = id_of(ctx, id, stack + pos, end - pos);
		if (fp->n == fp->cap) {
			fp->cap = fp->cap ? fp->cap * 2 : 64;
			fp->ends = g_renew(size_t, fp->ends, fp->cap);
			fp->ids = g_renew(uint32_t, fp->ids, fp->cap);
		}
		fp->ends[fp->n] = end;
		fp->ids[fp->n++] = id;
		pos = end + 1;
	}
	fp->last = stack;
	fp->last_len = len;
	*n = fp->n;
	return fp->ids;
}

void frame_path_reset(struct frame_path *fp)
{
	fp->last = NULL;
	fp->last_len = 0;
	fp->n = 0;
}

void frame_path_release(struct frame_path *fp)
{
	g_free(fp->copy);
	g_free(fp->ends);
	g_free(fp->ids);
	*fp = (struct frame_path)FRAME_PATH_INIT;
}
