// registry.cpp - the registered device kinds (registry.h): registration at static initialisation, the
// choice behind "auto", and each kind's probe run once.
#include "device/registry.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <mutex>
#include <stdexcept>

namespace mc::device {

namespace {

// Function-local statics: registrars in other files may run before any namespace-scope object here.
std::vector<DeviceKind>& kinds() {
  static std::vector<DeviceKind> k;
  return k;
}

}  // namespace

DeviceRegistrar::DeviceRegistrar(DeviceKind k) {
  std::vector<DeviceKind>& all = kinds();
  for (const DeviceKind& have : all)
    if (have.name == k.name) {
      std::fprintf(stderr, "megacluster: a second device named \"%s\" registered; the first is kept\n", k.name.c_str());
      return;
    }
  all.push_back(std::move(k));
  // The highest preference first, the reference last; ties by name, so the order does not depend on the
  // order the linker ran the registrars in.
  std::stable_sort(all.begin(), all.end(), [](const DeviceKind& a, const DeviceKind& b) {
    if (a.reference != b.reference) return b.reference;
    if (a.preference != b.preference) return a.preference > b.preference;
    return a.name < b.name;
  });
}

const std::vector<DeviceKind>& device_kinds() { return kinds(); }

const DeviceKind* find_device_kind(std::string_view name) {
  for (const DeviceKind& k : kinds())
    if (k.name == name) return &k;
  return nullptr;
}

const DeviceKind& reference_device_kind() {
  for (const DeviceKind& k : kinds())
    if (k.reference) return k;
  throw std::logic_error(
      "no reference compute device is registered: this program was linked without the engine's device files "
      "(link mc_engine, which links them whole)");
}

const DeviceProbe& probe_of(const DeviceKind& k) {
  static std::mutex m;
  static std::map<std::string, DeviceProbe> cache;
  std::lock_guard<std::mutex> lock(m);
  auto it = cache.find(k.name);
  if (it == cache.end()) it = cache.emplace(k.name, k.probe ? k.probe() : DeviceProbe{}).first;
  return it->second;
}

std::vector<std::string> device_choices() {
  std::vector<std::string> c{"auto"};
  for (const DeviceKind& k : kinds()) c.push_back(k.name);
  return c;
}

std::string device_choices_text() {
  std::string order, names;
  const std::vector<DeviceKind>& all = kinds();
  for (size_t i = 0; i < all.size(); ++i) {
    order += (i == 0 ? "" : i + 1 == all.size() ? ", else " : ", ") + all[i].name;
    names += (i + 1 == all.size() ? " or " : ", ") + all[i].name + " (" + all[i].summary + ")";
  }
  return "auto (the first that answers: " + order + ")" + names;
}

OpenedDevice open_device(const std::string& choice) {
  OpenedDevice r;
  const DeviceKind& ref = reference_device_kind();
  if (choice == "auto") {
    std::string skipped;
    for (const DeviceKind& k : kinds()) {
      if (k.reference) break;
      std::string why;
      if (auto d = k.open(&why)) {
        r.note = k.name + ": " + d->description();
        r.device = std::move(d);
        r.kind = &k;
        return r;
      }
      skipped += (skipped.empty() ? "" : "; ") + why;
    }
    r.device = ref.open(nullptr);
    r.kind = &ref;
    r.note = skipped.empty() ? ref.name + ": the only device of this build" : skipped + "; using the " + ref.summary;
    return r;
  }
  const DeviceKind* k = find_device_kind(choice);
  if (!k)
    throw std::invalid_argument("device \"" + choice + "\" is not in this build; it has " + device_choices_text());
  std::string why;
  r.device = k->open(&why);
  if (!r.device)
    throw std::invalid_argument("device \"" + choice + "\" was asked for, but it cannot be used: " + why +
                                "; use \"device\": \"auto\" (or --device auto) to fall back to the " + ref.summary);
  r.kind = k;
  r.note = k->reference ? k->name + ": requested" : k->name + ": " + r.device->description();
  return r;
}

std::unique_ptr<Device> open_kind(std::string_view name, std::string* why) {
  const DeviceKind* k = find_device_kind(name);
  if (!k) {
    if (why) *why = "device \"" + std::string(name) + "\" is not in this build; it has " + device_choices_text();
    return nullptr;
  }
  return k->open(why);
}

}  // namespace mc::device
