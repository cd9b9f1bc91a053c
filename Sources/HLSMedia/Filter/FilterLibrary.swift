import CFFmpeg
#if canImport(Glibc)
import Glibc
#endif

/// libavfilter, loaded only when a picture is drawn on (`--overlay`), as libavdevice is only for capture
/// (`DeviceLibrary`): linked, it and its dependencies would be mapped into every run of every command.
/// The few functions the time overlay calls are looked up once, by name.
struct FilterLibrary: @unchecked Sendable {
    static let fileName = "libavfilter.so.\(LIBAVFILTER_VERSION_MAJOR)"

    typealias Graph = UnsafeMutablePointer<AVFilterGraph>
    typealias Context = UnsafeMutablePointer<AVFilterContext>

    let getByName: @convention(c) (UnsafePointer<CChar>?) -> UnsafePointer<AVFilter>?
    let graphAlloc: @convention(c) () -> Graph?
    let graphFree: @convention(c) (UnsafeMutablePointer<Graph?>?) -> Void
    let graphCreateFilter: @convention(c) (UnsafeMutablePointer<Context?>?, UnsafePointer<AVFilter>?,
                                           UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafeMutableRawPointer?,
                                           Graph?) -> Int32
    let graphAllocFilter: @convention(c) (Graph?, UnsafePointer<AVFilter>?, UnsafePointer<CChar>?) -> Context?
    let initString: @convention(c) (Context?, UnsafePointer<CChar>?) -> Int32
    let link: @convention(c) (Context?, UInt32, Context?, UInt32) -> Int32
    let graphConfig: @convention(c) (Graph?, UnsafeMutableRawPointer?) -> Int32
    let addFrame: @convention(c) (Context?, UnsafeMutablePointer<AVFrame>?, Int32) -> Int32
    let getFrame: @convention(c) (Context?, UnsafeMutablePointer<AVFrame>?) -> Int32

    /// The library, loaded on first use; why not, when it cannot be.
    static let shared: Result<FilterLibrary, TimeOverlayError> = {
        guard let handle = dlopen(fileName, RTLD_NOW | RTLD_LOCAL) else {
            return .failure(.filterUnavailable("\(fileName) cannot be loaded (\(String(cString: dlerror()))); "
                + "install the distribution's libavfilter"))
        }
        func symbol<Function>(_ name: String, as type: Function.Type) throws(TimeOverlayError) -> Function {
            guard let address = dlsym(handle, name) else {
                throw .filterUnavailable("\(fileName) has no \(name)")
            }
            return unsafeBitCast(address, to: type)
        }
        do throws(TimeOverlayError) {
            return .success(FilterLibrary(
                getByName: try symbol("avfilter_get_by_name", as: type(of: placeholder.getByName)),
                graphAlloc: try symbol("avfilter_graph_alloc", as: type(of: placeholder.graphAlloc)),
                graphFree: try symbol("avfilter_graph_free", as: type(of: placeholder.graphFree)),
                graphCreateFilter: try symbol("avfilter_graph_create_filter", as: type(of: placeholder.graphCreateFilter)),
                graphAllocFilter: try symbol("avfilter_graph_alloc_filter", as: type(of: placeholder.graphAllocFilter)),
                initString: try symbol("avfilter_init_str", as: type(of: placeholder.initString)),
                link: try symbol("avfilter_link", as: type(of: placeholder.link)),
                graphConfig: try symbol("avfilter_graph_config", as: type(of: placeholder.graphConfig)),
                addFrame: try symbol("av_buffersrc_add_frame_flags", as: type(of: placeholder.addFrame)),
                getFrame: try symbol("av_buffersink_get_frame", as: type(of: placeholder.getFrame))))
        } catch {
            return .failure(error)
        }
    }()

    /// Only its members' types are used: what each symbol is cast to.
    private static let placeholder = FilterLibrary(
        getByName: { _ in nil }, graphAlloc: { nil }, graphFree: { _ in }, graphCreateFilter: { _, _, _, _, _, _ in 0 },
        graphAllocFilter: { _, _, _ in nil }, initString: { _, _ in 0 }, link: { _, _, _, _ in 0 },
        graphConfig: { _, _ in 0 }, addFrame: { _, _, _ in 0 }, getFrame: { _, _ in 0 })

    static func load() throws(TimeOverlayError) -> FilterLibrary {
        try shared.get()
    }
}
