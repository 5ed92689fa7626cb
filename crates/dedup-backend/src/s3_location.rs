//! Parsing of repository locations `s3:http[s]://HOST[:PORT]/BUCKET[/PREFIX]`.

/// The parts of an S3 location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct S3Location {
    /// `http[s]://HOST[:PORT]`.
    pub endpoint: String,
    /// The bucket's name.
    pub bucket: String,
    /// The folder inside the bucket (no leading or trailing `/`; may be empty).
    pub prefix: String,
}

impl S3Location {
    /// Parses `location`, which starts with `s3:`.
    pub fn parse(location: &str) -> Result<S3Location, String> {
        let bad = |why: &str| {
            format!("{location}: {why} (expected s3:https://HOST[:PORT]/BUCKET[/PREFIX])")
        };
        let url = location.strip_prefix("s3:").ok_or_else(|| bad("not an s3: location"))?;
        let (scheme, rest) = url.split_once("://").ok_or_else(|| bad("no http:// or https://"))?;
        if scheme != "http" && scheme != "https" {
            return Err(bad("the scheme must be http or https"));
        }
        let (host, path) = rest.split_once('/').ok_or_else(|| bad("no bucket"))?;
        if host.is_empty() {
            return Err(bad("no host"));
        }
        let mut parts = path.split('/').filter(|p| !p.is_empty());
        let bucket = parts.next().ok_or_else(|| bad("no bucket"))?.to_string();
        let prefix: Vec<&str> = parts.collect();
        if prefix.iter().any(|p| *p == "." || *p == "..") {
            return Err(bad("`.` and `..` are not allowed in the prefix"));
        }
        Ok(S3Location { endpoint: format!("{scheme}://{host}"), bucket, prefix: prefix.join("/") })
    }
}

/// The warning an `s3:http://` location deserves, unless its host is this machine (a loopback
/// address or `localhost`): requests and answers travel in clear. Whoever is on the network
/// path is then one more party with access to the storage: what the repository holds stays
/// encrypted and authenticated, but names, sizes and the pattern of requests show, and objects
/// can be changed or deleted.
pub fn plain_http_warning(location: &str) -> Option<String> {
    let parsed = S3Location::parse(location).ok()?;
    let authority = parsed.endpoint.strip_prefix("http://")?;
    let host = match authority.strip_prefix('[') {
        Some(bracketed) => bracketed.split(']').next().unwrap_or(""),
        None => authority.rsplit_once(':').map_or(authority, |(host, _)| host),
    };
    let loopback = host.eq_ignore_ascii_case("localhost")
        || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback());
    (!loopback).then(|| {
        format!(
            "{location}: plain HTTP: requests and answers travel unencrypted, so anyone on the \
             network path sees object names and sizes and can change or delete objects (their \
             contents stay encrypted and authenticated); use https:// where the service has it"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_split_into_endpoint_bucket_and_prefix() {
        let loc = S3Location::parse("s3:http://127.0.0.1:9000/bkt/a/b/").unwrap();
        assert_eq!(loc.endpoint, "http://127.0.0.1:9000");
        assert_eq!(loc.bucket, "bkt");
        assert_eq!(loc.prefix, "a/b");
        let loc = S3Location::parse("s3:https://s3.example.com/bkt").unwrap();
        assert_eq!((loc.endpoint.as_str(), loc.prefix.as_str()), ("https://s3.example.com", ""));
        for bad in [
            "s3:ftp://h/b",
            "s3:https://h",
            "s3:https://h/",
            "s3:https:///b",
            "https://h/b",
            "s3:https://h/b/../x",
        ] {
            assert!(S3Location::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn plain_http_off_this_machine_is_warned_about() {
        for quiet in [
            "s3:http://127.0.0.1:9000/b",
            "s3:http://localhost/b/p",
            "s3:http://[::1]:9000/b",
            "s3:https://s3.example.com/b",
            "not a location",
        ] {
            assert_eq!(plain_http_warning(quiet), None, "{quiet}");
        }
        for loud in ["s3:http://minio.lan:9000/b", "s3:http://10.0.0.5/b", "s3:http://[fe80::1]/b"]
        {
            assert!(plain_http_warning(loud).is_some_and(|w| w.contains("plain HTTP")), "{loud}");
        }
    }
}
