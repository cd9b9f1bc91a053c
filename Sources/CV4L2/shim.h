#ifndef HLSCAP_CV4L2_SHIM_H
#define HLSCAP_CV4L2_SHIM_H

#include <linux/videodev2.h>
#include <sys/ioctl.h>

// ioctl is variadic and the request codes are function-like macros; Swift can import neither,
// so each query the device listing needs gets a typed wrapper. Each returns ioctl's result.
static inline int hlscap_v4l2_querycap(int fd, struct v4l2_capability *capability) {
    return ioctl(fd, VIDIOC_QUERYCAP, capability);
}
static inline int hlscap_v4l2_enum_fmt(int fd, struct v4l2_fmtdesc *format) {
    return ioctl(fd, VIDIOC_ENUM_FMT, format);
}
static inline int hlscap_v4l2_enum_framesizes(int fd, struct v4l2_frmsizeenum *size) {
    return ioctl(fd, VIDIOC_ENUM_FRAMESIZES, size);
}
static inline int hlscap_v4l2_enum_frameintervals(int fd, struct v4l2_frmivalenum *interval) {
    return ioctl(fd, VIDIOC_ENUM_FRAMEINTERVALS, interval);
}

#endif
