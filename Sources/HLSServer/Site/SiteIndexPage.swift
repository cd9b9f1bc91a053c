import Foundation

/// `GET /` of a `SiteServer`: every stream as a card, in the streams' order, with its latest
/// snapshot, its state (and why it stopped), bit rate, viewers, a link to its player page (`NAME/`)
/// and, when it records, to its recordings' timeline there (`NAME/#timeline`).
///
/// Self-contained like the player page (nothing fetched from elsewhere) and laid out for a phone's
/// screen as well: one column on a narrow screen, as many as fit on a wide one. The page reloads its
/// own cards every few seconds (the pictures of live streams every ten), so no figure is formatted twice.
/// The credentials it was opened with (`?token=…` or a signed URL's fields) go into every link.
enum SiteIndexPage {
    static func html(_ entries: [SiteServer.Entry], credentials: String = "") -> String {
        let query = credentials.isEmpty ? "" : "?" + credentials
        let cards = entries.map { card($0, query: query) }.joined()
        let count = entries.count == 1 ? "1 stream" : "\(entries.count) streams"
        return """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><title>hlscap</title>
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <style>
            body { font: 15px system-ui, sans-serif; margin: 1em; background: #111; color: #eee; }
            h1 { font-size: 1.2em; margin: 0 0 .8em; }
            a { color: #8cf; }
            #streams { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 300px), 1fr)); gap: 1em; }
            .stream { background: #1c1c1c; border-radius: 6px; overflow: hidden; }
            .picture { display: block; aspect-ratio: 16 / 9; background: #000; }
            .picture img { width: 100%; height: 100%; object-fit: contain; display: block; }
            .picture img.missing { visibility: hidden; }
            .about { padding: .5em .7em .7em; }
            .about h2 { font-size: 1.05em; margin: 0 0 .3em; display: flex; gap: .5em; align-items: center; }
            .about h2 a { color: inherit; text-decoration: none; }
            .state { font-size: 12px; font-weight: normal; padding: .1em .6em; border-radius: 1em; background: #444; }
            .state.live { background: #1a7f37; }
            .state.reconnecting { background: #9a6700; }
            .state.stopped { background: #a40e26; }
            .reason, .problem { font-size: 13px; color: #f99; margin: .2em 0; }
            .figures { font-size: 13px; color: #aaa; font-variant-numeric: tabular-nums; margin: .2em 0 .4em; }
            .links a { margin-right: 1.2em; display: inline-block; padding: .3em 0; }
            </style></head>
            <body>
            <h1>hlscap: \(count)</h1>
            <main id="streams">\(cards)</main>
            <script>
            "use strict";
            window.hlscapIndex = { refreshed: 0 };
            const names = box => [...box.querySelectorAll(".stream")].map(card => card.dataset.name).join("/");
            async function refresh() {
              try {
                const response = await fetch(location.href, { cache: "no-store" });
                if (response.ok) {
                  const page = new DOMParser().parseFromString(await response.text(), "text/html");
                  const fresh = page.getElementById("streams"), shown = document.getElementById("streams");
                  if (names(fresh) !== names(shown)) {
                    shown.replaceWith(document.adoptNode(fresh));
                  } else {
                    for (const card of fresh.querySelectorAll(".stream")) {
                      const old = document.getElementById(card.id);
                      old.className = card.className;
                      old.querySelector(".about").replaceWith(document.adoptNode(card.querySelector(".about")));
                    }
                  }
                  document.querySelector("h1").textContent = page.querySelector("h1").textContent;
                  window.hlscapIndex.refreshed += 1;
                }
              } catch (error) {}
              setTimeout(refresh, 3000);
            }
            function refreshPictures() {
              for (const image of document.querySelectorAll(".stream.live .picture img")) {
                const url = new URL(image.src);
                url.searchParams.set("_", Date.now());
                image.classList.remove("missing");
                image.src = url.href;
              }
              setTimeout(refreshPictures, 10000);
            }
            setTimeout(refresh, 3000);
            setTimeout(refreshPictures, 10000);
            </script>
            </body></html>

            """
    }

    static func card(_ entry: SiteServer.Entry, query: String) -> String {
        let name = escaped(entry.name), status = entry.status
        var about = "<h2><a href=\"\(name)/\(query)\">\(name)</a> <span class=\"state \(status.state.name)\">\(status.state.name)</span></h2>"
        if let reason = status.state.reason { about += "<div class=\"reason\">\(escaped(reason))</div>" }
        var figures: [String] = []
        if let bitsPerSecond = status.bitsPerSecond { figures.append(bitRate(bitsPerSecond)) }
        figures.append(entry.viewers == 1 ? "1 viewer" : "\(entry.viewers) viewers")
        if let age = SiteAPI.finite(status.lastSegmentAgeSeconds) { figures.append(String(format: "last segment %.1f s ago", age)) }
        if status.framesDropped > 0 { figures.append("\(status.framesDropped) frames dropped") }
        if let backlog = status.publishBacklog, backlog.files > 0 { figures.append("\(backlog.files) files to upload") }
        about += "<div class=\"figures\">" + figures.map(escaped).joined(separator: " · ") + "</div>"
        if let problem = status.errors.last { about += "<div class=\"problem\">\(escaped(problem))</div>" }
        about += "<div class=\"links\"><a href=\"\(name)/\(query)\">watch</a>"
        if entry.recordings { about += "<a href=\"\(name)/\(query)#timeline\">recordings</a>" }
        about += "</div>"
        return """
            <article class="stream \(status.state.name)" id="stream-\(name)" data-name="\(name)">\
            <a class="picture" href="\(name)/\(query)"><img src="\(name)/snapshot.jpg\(query)" alt="\(name)" \
            onerror="this.classList.add('missing')"></a><div class="about">\(about)</div></article>

            """
    }

    /// `850 kb/s`, `4.2 Mb/s`.
    static func bitRate(_ bitsPerSecond: Int) -> String {
        bitsPerSecond < 1_000_000 ? "\(bitsPerSecond / 1000) kb/s" : String(format: "%.1f Mb/s", Double(bitsPerSecond) / 1_000_000)
    }

    static func escaped(_ text: String) -> String {
        var result = ""
        for character in text {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&#39;"
            default: result.append(character)
            }
        }
        return result
    }
}
