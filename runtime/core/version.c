/*
 * version.c - yg_version() and yg_build_info() (yagrad/version.h).
 *
 * Both are compile-time strings: YG_VERSION_STRING comes from the
 * project() version through the generated yagrad/version.h, and the
 * component flags from the definitions CMakeLists.txt gives the library
 * (YG_HAVE_MPI, YG_HAVE_ONNX, YG_HAVE_ONEDNN, YG_HAVE_NVRTC, YG_HAVE_CUDA), the same ones
 * that pick the stub or the real file of each component, so the line and
 * the components' own predicates cannot disagree (tests/test_version.c).
 */
#include "yagrad/version.h"

#ifdef YG_HAVE_MPI
#define YG__MPI "mpi"
#else
#define YG__MPI "-mpi"
#endif
#ifdef YG_HAVE_ONNX
#define YG__ONNX "onnx"
#else
#define YG__ONNX "-onnx"
#endif
#ifdef YG_HAVE_ONEDNN
#define YG__ONEDNN "onednn"
#else
#define YG__ONEDNN "-onednn"
#endif
#ifdef YG_HAVE_NVRTC
#define YG__NVRTC "nvrtc"
#else
#define YG__NVRTC "-nvrtc"
#endif
#ifdef YG_HAVE_CUDA
#define YG__CUDA "cuda"
#else
#define YG__CUDA "-cuda"
#endif

const char *yg_version(void)
{
    return YG_VERSION_STRING;
}

const char *yg_build_info(void)
{
    return "yagrad " YG_VERSION_STRING ": " YG__MPI " " YG__ONNX " " YG__ONEDNN " " YG__NVRTC
           " " YG__CUDA;
}
