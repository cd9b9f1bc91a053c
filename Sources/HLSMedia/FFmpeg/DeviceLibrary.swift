import CFFmpeg
#if canImport(Glibc)
import Glibc
#endif

/// libavdevice, loaded only by the commands that capture.
///
/// Linking it would map libavfilter and its dependencies (speech synthesis, SVG, SDL, PulseAudio …)
/// into every run: about 10 MB of resident pages that `hlscap file` has no use for.
public enum DeviceLibrary {
    public static let fileName = "libavdevice.so.\(LIBAVDEVICE_VERSION_MAJOR)"

    private static let registration: Result<Void, DeviceLibraryError> = {
        // Lazy binding: resolving every symbol of libavdevice and its dependencies up front costs more than capture uses.
        guard let handle = dlopen(fileName, RTLD_LAZY | RTLD_GLOBAL) else {
            return .failure(DeviceLibraryError(detail: String(cString: dlerror())))
        }
        guard let symbol = dlsym(handle, "avdevice_register_all") else {
            return .failure(DeviceLibraryError(detail: "\(fileName) has no avdevice_register_all"))
        }
        typealias RegisterAll = @convention(c) () -> Void
        unsafeBitCast(symbol, to: RegisterAll.self)()
        return .success(())
    }()

    /// Makes the capture formats (`video4linux2`, `alsa`) known to libavformat; safe to call again.
    public static func registerDevices() throws {
        try registration.get()
    }

    /// Whether libavformat knows an input format by this name (`video4linux2` once devices are registered).
    public static func hasInputFormat(_ name: String) -> Bool {
        av_find_input_format(name) != nil
    }
}

public struct DeviceLibraryError: Error, CustomStringConvertible {
    public var detail: String

    public var description: String {
        "cannot load \(DeviceLibrary.fileName) for device capture (\(detail)); install libavdevice59"
    }
}
