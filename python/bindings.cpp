// SPDX-License-Identifier: Apache-2.0
// Python bindings (nanobind) over the C++ library. The Pythonic layer (docstrings, helpers) is
// python/greenctx/__init__.py; this file maps types one to one.
#include "measure.hpp"

#include <greenctx/greenctx.hpp>

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <chrono>

namespace nb = nanobind;
using namespace nb::literals;
using namespace greenctx;

namespace {

// Python exception types, created in the module init; Error's subclasses are caught first.
PyObject *py_error = nullptr, *py_request_error = nullptr, *py_unsupported_error = nullptr;

void raise(PyObject *type, const error &e) {
  nb::object exc = nb::borrow(type)(e.what());
  exc.attr("code") = static_cast<int>(e.code());
  exc.attr("api") = e.api();
  PyErr_SetObject(type, exc.ptr());
}

split_flags make_flags(bool ignore_coscheduling, bool max_cluster) {
  split_flags f = split_flags::none;
  if (ignore_coscheduling)
    f = f | split_flags::ignore_sm_coscheduling;
  if (max_cluster)
    f = f | split_flags::max_potential_cluster_size;
  return f;
}

// Python exception types for error, request_error and unsupported_error, and their translation.
void bind_errors(nb::module_ &m) {
  py_error = PyErr_NewException("greenctx.Error", PyExc_RuntimeError, nullptr);
  py_request_error = PyErr_NewException("greenctx.RequestError", py_error, nullptr);
  py_unsupported_error = PyErr_NewException("greenctx.UnsupportedError", py_error, nullptr);
  m.attr("Error") = nb::borrow(py_error);
  m.attr("RequestError") = nb::borrow(py_request_error);
  m.attr("UnsupportedError") = nb::borrow(py_unsupported_error);
  nb::register_exception_translator([](const std::exception_ptr &p, void *) {
    try {
      std::rethrow_exception(p);
    } catch (const request_error &e) {
      raise(py_request_error, e);
    } catch (const unsupported_error &e) {
      raise(py_unsupported_error, e);
    } catch (const error &e) {
      raise(py_error, e);
    }
  });
}

// The toolkit and driver versions.
void bind_versions(nb::module_ &m) {
  m.def("toolkit_version", &toolkit_version, "CUDA toolkit version greenctx was built with.");
  m.def("format_cuda_version", &format_cuda_version, "version"_a, "'12.5' for 12050.");
  m.def(
      "query_driver",
      [] {
        const driver_info d = query_driver();
        nb::dict features;
        for (const auto &f : d.features)
          features[f.name] = nb::make_tuple(availability_name(f.status), f.introduced);
        nb::dict out;
        out["version"] = d.version;
        out["library"] = d.library;
        out["features"] = features;
        return out;
      },
      "The loaded driver: version, library and each feature's (status, native_since). Raises "
      "Error when there is no driver or GPU.");
}

// Pure arithmetic: granularity, partition requests and plans.
void bind_plans(nb::module_ &m) {
  nb::class_<granularity>(m, "Granularity",
                          "How SMs can be grouped: minimum partition and alignment.")
      .def(nb::init<>())
      .def_rw("min_partition", &granularity::min_partition)
      .def_rw("alignment", &granularity::alignment)
      .def("__repr__", [](const granularity &g) {
        return "Granularity(min_partition=" + std::to_string(g.min_partition) +
               ", alignment=" + std::to_string(g.alignment) + ")";
      });
  m.def(
      "documented_granularity",
      [](int major, int minor, bool ignore) {
        return documented_granularity(major, minor, make_flags(ignore, false));
      },
      "cc_major"_a, "cc_minor"_a = 0, "ignore_coscheduling"_a = false);
  m.def(
      "round_group_size",
      [](unsigned requested, granularity g) {
        const rounded_size r = round_group_size(requested, g);
        return nb::make_tuple(r.size, r.reason);
      },
      "requested"_a, "granularity"_a, "(size the driver gives, reason or '').");

  nb::class_<partition_request>(m, "PartitionRequest",
                                "SM counts in order, and whether the rest forms a last partition.")
      .def_ro("counts", &partition_request::counts)
      .def_ro("rest", &partition_request::rest)
      .def("__str__", &partition_request::to_string)
      .def("__repr__",
           [](const partition_request &r) { return "PartitionRequest('" + r.to_string() + "')"; });
  m.def("parse_partitions", &parse_partition_request, "text"_a,
        "Parse '16,rest' or '8,8,rest'. Raises RequestError naming the bad item.");
  m.def(
      "plan_partitions",
      [](const partition_request &req, unsigned sm_count, granularity g, bool ignore) {
        const partition_plan plan = plan_partitions(req, sm_count, g, make_flags(ignore, false));
        nb::list parts;
        for (const auto &p : plan.parts) {
          nb::dict d;
          d["requested"] = p.requested;
          d["planned"] = p.planned;
          d["rest"] = p.rest;
          d["first_piece"] = p.first_piece;
          d["pieces"] = p.pieces;
          d["rounding"] = p.rounding;
          parts.append(d);
        }
        nb::dict out;
        out["piece_size"] = plan.piece_size;
        out["groups"] = plan.groups;
        out["parts"] = parts;
        return out;
      },
      "request"_a, "sm_count"_a, "granularity"_a, "ignore_coscheduling"_a = false,
      "How a request is made from one split (pure). Raises RequestError when it cannot be.");
}

// SM resources, events, execution contexts and split by count.
void bind_resources_and_contexts(nb::module_ &m) {
  nb::class_<sm_resource>(m, "SmResource",
                          "A set of SMs as the driver describes it (a plain value).")
      .def_prop_ro("sm_count", &sm_resource::sm_count)
      .def_prop_ro("min_partition_size", &sm_resource::min_partition_size)
      .def_prop_ro("coscheduled_alignment", &sm_resource::coscheduled_alignment)
      .def("__repr__", [](const sm_resource &r) {
        return "SmResource(sm_count=" + std::to_string(r.sm_count()) + ")";
      });

  nb::enum_<event_flags>(m, "EventFlags", nb::is_flag(), "Event creation flags.")
      .value("NONE", event_flags::none)
      .value("BLOCKING_SYNC", event_flags::blocking_sync)
      .value("DISABLE_TIMING", event_flags::disable_timing);
  nb::class_<event>(m, "Event",
                    "A CUDA event, created in the device's primary context; usable with every "
                    "context of the device.")
      .def(nb::init<execution_context_ref, event_flags>(), "context"_a,
           "flags"_a = event_flags::none)
      .def(
          "record", [](const event &e, const stream &s) { e.record(s); }, "stream"_a,
          "Capture the work submitted to the stream so far.")
      .def(
          "synchronize", [](const event &e) { e.synchronize(); },
          "Block until the recorded work has finished.")
      .def(
          "ready", [](const event &e) { return e.ready(); },
          "True when the recorded work has finished.")
      .def_prop_ro("handle", [](const event &e) {
        return reinterpret_cast<std::uintptr_t>(e.native_handle());
      });
  m.def(
      "elapsed_ms", [](const event &a, const event &b) { return elapsed_ms(a, b); }, "start"_a,
      "end"_a);

  nb::class_<execution_context_ref>(m, "ExecutionContext",
                                    "The primary context of a device or a green context. No call "
                                    "depends on the thread's current context.")
      .def_prop_ro("is_green", &execution_context_ref::is_green)
      .def_prop_ro("id", &execution_context_ref::id)
      .def("sms", &execution_context_ref::sms, "The SMs this context may use.")
      .def(
          "create_stream",
          [](const execution_context_ref &c, bool non_blocking, int priority) {
            return c.create_stream(non_blocking ? stream_flags::non_blocking : stream_flags::none,
                                   priority);
          },
          "non_blocking"_a = false, "priority"_a = 0, nb::keep_alive<0, 1>(),
          "A stream on this context (priority is clamped to the device range). The stream keeps "
          "the context alive.")
      .def(
          "record", [](const execution_context_ref &c, const event &e) { c.record(e); }, "event"_a,
          "Capture all work submitted to this context so far in the event.")
      .def(
          "wait", [](const execution_context_ref &c, const event &e) { c.wait(e); }, "event"_a,
          "Make all later work of this context wait for the event.")
      .def("synchronize", &execution_context_ref::synchronize,
           nb::call_guard<nb::gil_scoped_release>(),
           "Block until this context's work so far has finished.");
  nb::class_<green_context, execution_context_ref>(
      m, "GreenContext",
      "A green context. Those of a PartitionSet belong to it; GreenContext.create makes one that "
      "this object owns (destroyed with it: keep it, re-creating leaks ~4 MiB on driver 580).")
      .def_static(
          "create",
          [](const std::vector<sm_resource> &pieces) {
            return green_context::create(descriptor::from(pieces));
          },
          "pieces"_a,
          "A green context over SM pieces of one split (a group's pieces, or several groups and "
          "the remainder of one split call).");

  nb::class_<split_result>(m, "SplitResult", "What split_by_count gave.")
      .def_ro("groups", &split_result::groups)
      .def_ro("remainder", &split_result::remainder)
      .def_prop_ro("explanation", &split_result::explanation);
  m.def(
      "split_by_count",
      [](const sm_resource &input, unsigned groups, unsigned min_count, bool ignore) {
        return split_by_count(input, groups, min_count, make_flags(ignore, false));
      },
      "resource"_a, "groups"_a, "min_count"_a, "ignore_coscheduling"_a = false,
      "Up to `groups` equal groups of at least `min_count` SMs, plus a remainder "
      "(cuDevSmResourceSplitByCount). Sizes are rounded up to the granularity; fewer groups when "
      "the SMs run out.");
}

// CUDA 13.1 group parameters and the heterogeneous split.
void bind_group_splits(nb::module_ &m) {
  nb::class_<sm_group_params>(m, "GroupParams",
                              "One group of a heterogeneous split (cudaDevSmResourceGroupParams).")
      .def(
          "__init__",
          [](sm_group_params *p, unsigned sm_count, unsigned coscheduled, unsigned preferred,
             bool backfill) {
            new (p) sm_group_params{sm_count, coscheduled, preferred,
                                    backfill ? sm_group_backfill : 0u};
          },
          "sm_count"_a = 0, "coscheduled"_a = 0, "preferred"_a = 0, "backfill"_a = false,
          "sm_count 0 discovers as many SMs as fit; coscheduled and preferred 0 take the "
          "defaults.")
      .def_rw("sm_count", &sm_group_params::sm_count)
      .def_rw("coscheduled", &sm_group_params::coscheduled_sm_count)
      .def_rw("preferred", &sm_group_params::preferred_coscheduled_sm_count)
      .def_prop_rw(
          "backfill", [](const sm_group_params &p) { return (p.flags & sm_group_backfill) != 0; },
          [](sm_group_params &p, bool b) { p.flags = b ? sm_group_backfill : 0u; })
      .def("__eq__", [](const sm_group_params &a, const sm_group_params &b) { return a == b; })
      .def("__repr__", [](const sm_group_params &p) { return to_string(p); });
  m.def("parse_groups", &parse_group_params, "text"_a,
        "Group parameters from text: '16:cosched=2:pref=2 0:backfill' (pure).");

  nb::class_<sm_group>(m, "SmGroup", "One group (or the remainder) of split_groups.")
      .def_ro("pieces", &sm_group::pieces)
      .def_ro("coscheduled", &sm_group::coscheduled)
      .def_prop_ro("sm_count", &sm_group::sm_count)
      .def("__repr__", [](const sm_group &g) {
        return "SmGroup(sm_count=" + std::to_string(g.sm_count()) +
               ", coscheduled=" + std::to_string(g.coscheduled) + ")";
      });
  nb::class_<group_split_result>(m, "GroupSplit", "What split_groups gave.")
      .def_ro("params", &group_split_result::params)
      .def_ro("groups", &group_split_result::groups)
      .def_ro("remainder", &group_split_result::remainder)
      .def_ro("remainder_sms", &group_split_result::remainder_sms)
      .def_ro("split_calls", &group_split_result::runs)
      .def_ro("native", &group_split_result::native)
      .def_prop_ro("obtained",
                   [](const group_split_result &r) {
                     std::vector<unsigned> out;
                     for (const auto &o : r.outcomes)
                       out.push_back(o.obtained);
                     return out;
                   })
      .def_prop_ro("explanation", &group_split_result::explanation)
      .def_ro("advice", &group_split_result::advice,
              "When not every group can be made (a dry run): what the device's co-scheduled "
              "units allow and nearby requests that can be made; else empty.");
  m.def(
      "split_groups",
      [](const sm_resource &input, nb::object groups, bool dry_run) {
        std::vector<sm_group_params> params =
            nb::isinstance<nb::str>(groups) ? parse_group_params(nb::cast<std::string>(groups))
                                            : nb::cast<std::vector<sm_group_params>>(groups);
        return split_groups(input, params, dry_run);
      },
      "resource"_a, "groups"_a, "dry_run"_a = false,
      "CUDA 13.1's heterogeneous split (cudaDevSmResourceSplit) on any driver: groups as "
      "GroupParams or text ('16:cosched=2 0:backfill'), made left to right; discovery (0) and "
      "backfill supported. The result's params carry the defaults and discovered counts. Raises "
      "RequestError when a group cannot be made (unless dry_run; the message ends with advice), "
      "including a group that cannot run the clusters its coscheduled count promises (proved "
      "at the split with the occupancy calculator), Error (code 801, not supported) "
      "for co-scheduled counts the driver cannot guarantee.");
  m.def("max_active_sm_clusters", &max_active_sm_clusters, "context"_a, "cluster_size"_a,
        "How many clusters of cluster_size SMs (one block per SM) the context can run at once.");
}

// Streams, devices and partition sets.
void bind_streams_and_partitions(nb::module_ &m) {
  nb::class_<stream>(
      m, "Stream",
      "A stream bound to an execution context; kernels on it use only that context's SMs. Use "
      "handle or __cuda_stream__ with other libraries (torch.cuda.ExternalStream(s.handle)).")
      .def_prop_ro(
          "handle",
          [](const stream &s) { return reinterpret_cast<std::uintptr_t>(s.native_handle()); })
      .def("__cuda_stream__",
           [](const stream &s) {
             return nb::make_tuple(0, reinterpret_cast<std::uintptr_t>(s.native_handle()));
           })
      .def(
          "synchronize", [](const stream &s) { s.synchronize(); },
          nb::call_guard<nb::gil_scoped_release>())
      .def("ready", [](const stream &s) { return s.ready(); })
      .def_prop_ro("priority", [](const stream &s) { return s.priority(); })
      .def("sms", [](const stream &s) { return s.sms(); });

  nb::class_<device>(m, "Device", "A GPU by ordinal; retains its primary context while alive.")
      .def(nb::init<int>(), "ordinal"_a = 0)
      .def_static("count", &device::count)
      .def_prop_ro("ordinal", &device::ordinal)
      .def_prop_ro("name", &device::name)
      .def_prop_ro("compute_capability", &device::compute_capability)
      .def_prop_ro("pci_bus_id", &device::pci_bus_id)
      .def("sms", &device::sms, "All SMs of the device, with minimum partition and alignment.")
      .def_prop_ro("primary_context", &device::primary_context)
      .def("memory_info", &device::memory_info, "(free, total) device memory in bytes.");

  nb::class_<partition>(
      m, "Partition",
      "One partition of a PartitionSet: what was asked, what it got, and its green context.")
      .def_ro("requested", &partition::requested)
      .def_ro("rest", &partition::rest)
      .def_ro("rounding", &partition::rounding)
      .def_prop_ro("obtained", &partition::obtained)
      .def_prop_ro("label", &partition::label)
      .def_prop_ro(
          "context", [](partition &p) -> green_context & { return p.context; },
          nb::rv_policy::reference_internal);
  nb::class_<partition_set>(
      m, "PartitionSet",
      "Disjoint partitions made from one split, each with its own green context. Create once and "
      "keep it: re-creating green contexts costs ~1.5 ms and leaks ~4 MiB each on driver 580.")
      .def_static(
          "create",
          [](const device &dev, const std::string &text, bool ignore) {
            return partition_set::create(dev, parse_partition_request(text),
                                         make_flags(ignore, false));
          },
          "device"_a, "split"_a, "ignore_coscheduling"_a = false)
      .def("__len__", [](const partition_set &s) { return s.parts().size(); })
      .def(
          "__getitem__",
          [](partition_set &s, std::size_t i) -> partition & {
            if (i >= s.parts().size())
              throw nb::index_error();
            return s.parts()[i];
          },
          nb::rv_policy::reference_internal);
}

// Streams owned elsewhere, and filling a stream's SMs.
void bind_stream_refs_and_fill(nb::module_ &m) {
  nb::class_<stream_ref>(m, "StreamRef", nb::dynamic_attr(),
                         "A stream that belongs to something else (a Pool): kernels on it use only "
                         "its context's SMs. Use handle or __cuda_stream__ with other libraries "
                         "(torch.cuda.ExternalStream(s.handle)). It keeps its owner alive.")
      .def_prop_ro("handle",
                   [](stream_ref s) { return reinterpret_cast<std::uintptr_t>(s.native_handle()); })
      .def("__cuda_stream__",
           [](stream_ref s) {
             return nb::make_tuple(0, reinterpret_cast<std::uintptr_t>(s.native_handle()));
           })
      .def(
          "synchronize", [](stream_ref s) { s.synchronize(); },
          nb::call_guard<nb::gil_scoped_release>())
      .def("ready", [](stream_ref s) { return s.ready(); })
      .def_prop_ro("priority", [](stream_ref s) { return s.priority(); })
      .def("sms", [](stream_ref s) { return s.sms(); })
      .def("__eq__", [](stream_ref a, stream_ref b) { return a == b; })
      .def("__hash__", [](stream_ref s) { return std::hash<const void *>()(s.native_handle()); });

  const auto fill = [](stream_ref s, double seconds) {
    if (!(seconds > 0 && seconds <= 60))
      throw request_error(CUDA_ERROR_INVALID_VALUE, "greenctx.fill_sms",
                          "seconds must be more than 0 and at most 60");
    return fill_sms(s, std::chrono::nanoseconds(static_cast<long long>(seconds * 1e9)));
  };
  constexpr const char *fill_doc =
      "Fills every SM of the stream's context for `seconds` with spinning blocks, so that no "
      "other block can be resident there until they end; returns the blocks launched. Work "
      "that should run on those SMs must wait: the test of whether a library's kernels stay on a "
      "partition.";
  m.def(
      "fill_sms", [fill](const stream &s, double seconds) { return fill(s, seconds); }, "stream"_a,
      "seconds"_a, fill_doc);
  m.def("fill_sms", fill, "stream"_a, "seconds"_a, fill_doc);
  m.def(
      "fill_sms",
      [fill](std::uintptr_t handle, double seconds) {
        if (handle == 0)
          throw request_error(CUDA_ERROR_INVALID_VALUE, "greenctx.fill_sms",
                              "stream handle 0 is the legacy default stream: give a stream's "
                              "handle (e.g. torch.cuda.Stream(...).cuda_stream)");
        return fill(stream_ref(reinterpret_cast<CUstream>(handle)), seconds);
      },
      "stream_handle"_a, "seconds"_a,
      "The same for a CUDA stream given by its handle (an int, as torch's stream.cuda_stream).");
}

// Pools of layouts.
void bind_pools(nb::module_ &m) {
  nb::class_<pool_partition>(
      m, "PoolPartition", nb::dynamic_attr(),
      "One partition of a Pool layout: its green context and streams, shared with every partition "
      "of the pool that holds the same SMs (equal slot). It keeps the pool alive.")
      .def_ro("requested", &pool_partition::requested)
      .def_ro("rest", &pool_partition::rest)
      .def_ro("whole_device", &pool_partition::whole_device)
      .def_ro("rounding", &pool_partition::rounding)
      .def_ro("sm_count", &pool_partition::sm_count)
      .def_ro("slot", &pool_partition::slot)
      .def_prop_ro("label", &pool_partition::label)
      .def_prop_ro(
          "context",
          [](const pool_partition &p) { return static_cast<execution_context_ref>(p.context); },
          nb::keep_alive<0, 1>())
      .def_prop_ro("streams", [](nb::handle self) {
        nb::list out;
        for (stream_ref s : nb::cast<const pool_partition &>(self).streams) {
          nb::object o = nb::cast(s);
          o.attr("_owner") = self; // keeps the pool alive
          out.append(o);
        }
        return out;
      });

  nb::class_<pool>(m, "_Pool", "The C++ greenctx::pool; greenctx.Pool wraps it (use that).")
      .def(
          "__init__",
          [](pool *self, const device &dev, const std::vector<std::string> &layouts,
             unsigned streams, int priority, bool ignore) {
            pool_options o;
            o.streams_per_partition = streams;
            o.priority = priority;
            o.flags = make_flags(ignore, false);
            new (self) pool(pool::create(dev, layouts, o));
          },
          "device"_a, "layouts"_a, "streams_per_partition"_a = 2, "priority"_a = 0,
          "ignore_coscheduling"_a = false, nb::keep_alive<1, 2>())
      .def_prop_ro("names",
                   [](const pool &p) {
                     std::vector<std::string> out;
                     for (const auto &l : p.layouts())
                       out.push_back(l.name);
                     return out;
                   })
      .def("index_of", &pool::index_of, "name"_a)
      .def("use", nb::overload_cast<std::size_t>(&pool::use), "index"_a)
      .def_prop_ro("current_index", &pool::current_index)
      .def(
          "partitions",
          [](nb::handle self, std::size_t index) {
            const pool &p = nb::cast<const pool &>(self);
            if (index >= p.layouts().size())
              throw nb::index_error("layout index out of range");
            nb::list out;
            for (const pool_partition &part : p.layouts()[index].parts) {
              nb::object o = nb::cast(part); // a copy: handles only, kept valid by the pool
              o.attr("_owner") = self;       // keeps the pool alive
              out.append(o);
            }
            return out;
          },
          "index"_a)
      .def("drain", &pool::drain, "from_index"_a, "into_index"_a)
      .def("synchronize", &pool::synchronize, "index"_a, nb::call_guard<nb::gil_scoped_release>())
      .def("stats", [](const pool &p) {
        const pool_stats &st = p.stats();
        nb::dict d;
        d["layouts"] = st.layouts;
        d["partitions"] = st.partitions;
        d["contexts"] = st.contexts;
        d["streams"] = st.streams;
        d["creation_ms"] = static_cast<double>(st.creation_time.count()) / 1e6;
        d["device_memory_bytes"] = st.device_memory_bytes;
        return d;
      });
}

// The %smid verification of a partition set.
void bind_verify(nb::module_ &m) {
  m.def(
      "verify",
      [](const device &dev, const partition_set &set) {
        verify_report r;
        {
          // The probe waits for the GPU; the dict below needs the GIL again.
          nb::gil_scoped_release release;
          r = verify_partitions(dev, set);
        }
        nb::dict out;
        nb::list parts;
        for (const auto &u : r.parts) {
          nb::dict d;
          d["label"] = u.label;
          d["obtained"] = u.obtained;
          d["sms"] = u.sms;
          parts.append(d);
        }
        out["parts"] = parts;
        out["violations"] = r.violations;
        out["notes"] = r.notes;
        out["ok"] = r.ok();
        return out;
      },
      "device"_a, "partitions"_a,
      "Run a %smid probe on every partition at once; returns the SMs each used, violations "
      "(overlap, or more SMs than held) and notes. report['ok'] is True when there are none.");
}

} // namespace

NB_MODULE(_greenctx, m) {
  m.doc() = "greenctx: partition a GPU's SMs with CUDA green contexts (C++ core)";
  bind_errors(m);
  bind_versions(m);
  bind_plans(m);
  bind_resources_and_contexts(m);
  bind_group_splits(m);
  bind_streams_and_partitions(m);
  bind_stream_refs_and_fill(m);
  bind_pools(m);
  bind_verify(m);
  bind_measure(m);
}
