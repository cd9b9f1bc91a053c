#ifndef HLSCAP_CFFMPEG_SHIM_H
#define HLSCAP_CFFMPEG_SHIM_H

#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libavcodec/bsf.h>
#include <libavdevice/avdevice.h>
#include <libavfilter/avfilter.h>
#include <libavfilter/buffersink.h>
#include <libavfilter/buffersrc.h>
#include <libavutil/avutil.h>
#include <libavutil/audio_fifo.h>
#include <libavutil/channel_layout.h>
#include <libavutil/display.h>
#include <libavutil/error.h>
#include <libavutil/hwcontext.h>
#include <libavutil/imgutils.h>
#include <libavutil/opt.h>
#include <libavutil/samplefmt.h>
#include <libswscale/swscale.h>
#include <libswresample/swresample.h>
#include <stdarg.h>
#include <stdio.h>
#include <malloc.h>
#include <sys/prctl.h>

// Macros Swift cannot import, as functions.
static inline int hlscap_averror(int posixError) { return AVERROR(posixError); }
static inline int hlscap_averror_eof(void) { return AVERROR_EOF; }
static inline int hlscap_averror_eagain(void) { return AVERROR(EAGAIN); }
static inline int hlscap_averror_invaliddata(void) { return AVERROR_INVALIDDATA; }
static inline int hlscap_averror_decoder_not_found(void) { return AVERROR_DECODER_NOT_FOUND; }
static inline int64_t hlscap_nopts_value(void) { return AV_NOPTS_VALUE; }
static inline AVRational hlscap_time_base_q(void) { return AV_TIME_BASE_Q; }
static inline int hlscap_averror_stream_not_found(void) { return AVERROR_STREAM_NOT_FOUND; }

// Asks the kernel not to back this process's memory with 2 MB transparent huge pages. x264
// requests them for its frame buffers, and a huge page counts whole however little of it is
// used. prctl is variadic, which Swift cannot call.
static inline int hlscap_disable_transparent_huge_pages(void) { return prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0); }

// At most `count` malloc arenas (glibc's default is eight for each core). M_ARENA_MAX is a macro.
static inline int hlscap_limit_malloc_arenas(int count) { return mallopt(M_ARENA_MAX, count); }

// Formats a log message without consuming `args`, so the same va_list can still be
// handed to av_log_default_callback afterwards.
static inline void hlscap_format_log_message(char *buffer, size_t size, const char *format, va_list args) {
    va_list copy;
    va_copy(copy, args);
    vsnprintf(buffer, size, format, copy);
    va_end(copy);
}

#endif
