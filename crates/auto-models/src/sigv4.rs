//! AWS Signature Version 4 for Bedrock's requests, by the AWS SDK's own signer (`aws-sigv4`):
//! the signed headers are `host`, `content-type` and `x-amz-date` (and `x-amz-security-token`
//! with session credentials), the service name is `bedrock`, and the path is signed
//! double-encoded as for every AWS service but S3, so a model id with `:` (sent as `%3A`) signs
//! as `%253A`.
//!
//! Only the signing is taken from the SDK: no SDK client, credential chain or runtime. The
//! credentials are the operator's secrets from the configuration.

use std::time::SystemTime;

use aws_credential_types::Credentials;
use aws_sigv4::http_request::{SignableBody, SignableRequest, SigningSettings, sign};
use aws_sigv4::sign::v4;

use crate::config::AwsSigning;

/// The signing name of Bedrock's runtime API.
pub(crate) const BEDROCK_SIGNING_NAME: &str = "bedrock";

/// The headers that sign one request: `authorization`, `x-amz-date` and, with a session token,
/// `x-amz-security-token`. `url` is already percent-encoded; `headers` are those sent besides
/// them that are to be signed.
///
/// The error says what could not be signed, never with a credential in it.
pub(crate) fn signing_headers(
    aws: &AwsSigning,
    url: &str,
    headers: &[(&str, &str)],
    body: &[u8],
    time: SystemTime,
) -> Result<Vec<(String, String)>, String> {
    let credentials = Credentials::new(
        aws.access_key_id.current(),
        aws.secret_access_key.current(),
        aws.session_token
            .as_ref()
            .map(crate::config::Secret::current),
        None,
        "auto configuration",
    );
    let identity = credentials.into();
    let params = v4::SigningParams::builder()
        .identity(&identity)
        .region(&aws.region)
        .name(BEDROCK_SIGNING_NAME)
        .time(time)
        .settings(SigningSettings::default())
        .build()
        .map_err(|_| "the signing parameters are incomplete".to_owned())?
        .into();
    let request = SignableRequest::new(
        "POST",
        url,
        headers.iter().copied(),
        SignableBody::Bytes(body),
    )
    .map_err(|_| "the request's URL cannot be signed".to_owned())?;
    let (instructions, _signature) = sign(request, &params)
        .map_err(|_| "the request cannot be signed".to_owned())?
        .into_parts();
    Ok(instructions
        .headers()
        .map(|(name, value)| (name.to_owned(), value.to_owned()))
        .collect())
}

/// A path segment percent-encoded as the AWS SDKs encode a model id in Bedrock's paths: every
/// byte but the unreserved characters of RFC 3986.
pub(crate) fn encode_segment(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for byte in segment.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use super::*;
    use crate::config::Secret;

    fn aws(session_token: Option<&str>) -> AwsSigning {
        AwsSigning {
            region: "us-east-1".to_owned(),
            access_key_id: Secret::inline_for_tests("AKIDEXAMPLE"),
            secret_access_key: Secret::inline_for_tests("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"),
            session_token: session_token.map(Secret::inline_for_tests),
        }
    }

    /// 2015-08-30T12:36:00Z, the time of AWS's published SigV4 test suite.
    fn suite_time() -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(1_440_938_160)
    }

    fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
        headers
            .iter()
            .find(|(header, _)| header == name)
            .map(|(_, value)| value.as_str())
    }

    /// A Converse request for a model id with a `:`, signed at a fixed time. The expected
    /// signature was computed independently by botocore 1.43 (`botocore.auth.SigV4Auth` over an
    /// `AWSRequest` with the same method, URL, headers and body), which is how the AWS CLI and
    /// boto3 sign Bedrock's requests.
    #[test]
    fn a_converse_request_signs_as_botocore_signs_it() {
        let url = format!(
            "https://bedrock-runtime.us-east-1.amazonaws.com/model/{}/converse",
            encode_segment("anthropic.claude-3-5-sonnet-20240620-v1:0")
        );
        assert!(url.contains("/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse"));
        let body = br#"{"messages":[{"role":"user","content":[{"text":"Say hello."}]}]}"#;
        let headers = signing_headers(
            &aws(None),
            &url,
            &[("content-type", "application/json")],
            body,
            suite_time(),
        )
        .expect("signed");
        assert_eq!(header(&headers, "x-amz-date"), Some("20150830T123600Z"));
        assert_eq!(
            header(&headers, "authorization"),
            Some(concat!(
                "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/bedrock/aws4_request, ",
                "SignedHeaders=content-type;host;x-amz-date, ",
                "Signature=cef6a8f21bc6349c1967f3e59d2e5012c15f3909356b12302c7301104b6e744d"
            ))
        );
        assert_eq!(header(&headers, "x-amz-security-token"), None);
    }

    #[test]
    fn a_session_token_is_signed_and_sent() {
        let url =
            "https://bedrock-runtime.us-east-1.amazonaws.com/model/amazon.nova-pro-v1%3A0/converse";
        let headers = signing_headers(
            &aws(Some("session-token-example")),
            url,
            &[("content-type", "application/json")],
            b"{}",
            suite_time(),
        )
        .expect("signed");
        assert_eq!(
            header(&headers, "x-amz-security-token"),
            Some("session-token-example")
        );
        assert_eq!(
            header(&headers, "authorization"),
            Some(concat!(
                "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/bedrock/aws4_request, ",
                "SignedHeaders=content-type;host;x-amz-date;x-amz-security-token, ",
                "Signature=4a8fe2203a8642de99d51655b6d104679d02ee03e0e36024a9b6fd0f96851ebf"
            ))
        );
    }

    /// AWS's published test suite, `get-vanilla`: the signer itself against the known vector.
    #[test]
    fn the_aws_test_suite_get_vanilla_vector() {
        let credentials = Credentials::new(
            "AKIDEXAMPLE",
            "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
            None,
            None,
            "test",
        );
        let identity = credentials.into();
        let params = v4::SigningParams::builder()
            .identity(&identity)
            .region("us-east-1")
            .name("service")
            .time(suite_time())
            .settings(SigningSettings::default())
            .build()
            .unwrap()
            .into();
        let request = SignableRequest::new(
            "GET",
            "https://example.amazonaws.com/",
            std::iter::empty(),
            SignableBody::Bytes(&[]),
        )
        .unwrap();
        let (_, signature) = sign(request, &params).unwrap().into_parts();
        assert_eq!(
            signature,
            "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"
        );
    }

    #[test]
    fn model_ids_and_arns_are_encoded_as_one_segment() {
        assert_eq!(
            encode_segment("amazon.nova-pro-v1:0"),
            "amazon.nova-pro-v1%3A0"
        );
        assert_eq!(
            encode_segment("arn:aws:bedrock:us-east-1:123:inference-profile/us.x"),
            "arn%3Aaws%3Abedrock%3Aus-east-1%3A123%3Ainference-profile%2Fus.x"
        );
    }
}
