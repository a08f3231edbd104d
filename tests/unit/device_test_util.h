// device_test_util.h - host vectors to and from a device's buffers (device/compute.h), for tests that
// drive Comm, a worker or a kernel directly. The copies are counted like any other.
#pragma once

#include "device/compute.h"
#include "train/kernels/cpu_device.h"

#include <cstdint>
#include <vector>

namespace mc::test {

template <class T>
device::Buffer<T> on_device(device::Device& d, const std::vector<T>& v) {
  device::Buffer<T> b(d, int64_t(v.size()));
  d.upload(b.ptr(), v.data(), int64_t(v.size()));
  return b;
}

template <class T>
std::vector<T> on_host(device::Device& d, device::DPtr<T> p, int64_t n) {
  std::vector<T> v(static_cast<size_t>(n));
  d.download(v.data(), device::DPtr<const T>(p), n);
  return v;
}
template <class T>
std::vector<T> on_host(device::Device& d, const device::Buffer<T>& b) {
  return on_host(d, b.ptr(), b.size());
}

}  // namespace mc::test
