// g++ with -fsanitize-coverage=trace-cmp also traces float and double
// compares (__sanitizer_cov_trace_cmpf/cmpd), which libFuzzer does not
// implement. These no-ops let g++-built targets link against $LIBFUZZER_A;
// clang never emits the calls. Linked into g++ builds only.
extern "C" {
void __sanitizer_cov_trace_cmpf(float, float) {}
void __sanitizer_cov_trace_cmpd(double, double) {}
}
